"""Small real plugins that exercise session-owned continuations.

- ``organizer``: proposes moving the files of a sandbox folder into folders by type, and
  carries the moves out on a yes — in that conversation only, and re-validated first.
- ``inbox``: reads a local mbox file; lists emails and answers an ambiguous "read the email
  about X" with a numbered shortlist to pick from.
- ``planner``: a general agent that ends its answers with questions (plans to approve,
  numbered lists to pick from, quick questions that pause its run).

Each is a function ``register(services, config)`` over :class:`pawflow.chat.PluginAPI`.
"""

from importlib import resources

from pawflow.chat.plugins import PluginAPI

ROWS_FILE = "intercepts.yaml"


def declare_rows(services: PluginAPI) -> None:
    """The demo plugins' rows of the intercept chain, in their one order."""
    text = resources.files(__name__).joinpath(ROWS_FILE).read_text("utf-8")
    services.declare_intercepts(text, f"{__name__}/{ROWS_FILE}")
