"""Every demo of PawFlow: the deploy agent, the chat plugins (planner, organizer, inbox),
the example flows and the tour of every kind. ``pawflow serve --demo`` sets them up."""
