from pawflow.cli import main

main()
