"""An optional second reader of replies, consulted only where the deterministic one is unsure.

The matching rules (:mod:`pawflow.chat.matching`) are decided by the deterministic readers of
:mod:`pawflow.reading.words`. A classifier — a model, say — may be plugged in behind the same
two questions ("is this a yes or a no?", "which item does this pick?"). It is off by default
and bounded on every side:

- it is asked only about the pending continuation of the turn's own session, and is handed
  nothing but that question, its options and the reply: it cannot name another session, so
  it can never move an answer across sessions;
- it is asked only when the deterministic reader is *unsure* (words its tables do not
  know); a message the reader refused — a question, a condition, a quantity, two numbers,
  a contradiction — stays refused, whatever the classifier would say;
- its pick must be one of the listed items, and anything it fails at reads as "not an
  answer".

Enable it on a chat service with :func:`enable`::

    enable(service.pipeline, ModelClassifier(model, service.store))

Its model is called through an agent loop with no tools, so the governance hook sees every
call, as it sees an agent's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pawflow.agent.governance import Governance, Limits
from pawflow.agent.loop import AgentLoop, RunRequest
from pawflow.agent.models.base import ChatMessage
from pawflow.agent.tools import Toolbox, ToolContext
from pawflow.chat.pipeline import ClassifyStage, Pipeline
from pawflow.reading.words import Classifier

if TYPE_CHECKING:
    from pawflow.agent.models.base import Model
    from pawflow.store import Store

log = logging.getLogger("pawflow.chat")

__all__ = ["Classifier", "ModelClassifier", "enable"]

_YES_NO_PROMPT = (
    "You read one chat reply. The assistant asked: {question}\n"
    "Is the reply nothing more than a yes or a no to that question? Answer with exactly one "
    "word: YES, NO, or NEITHER (a question, a condition, a new request, or unclear)."
)
_PICK_PROMPT = (
    "You read one chat reply. The assistant listed these items and asked: {question}\n"
    "{items}\n"
    "Does the reply pick exactly one of the items, and nothing more? Answer with exactly the "
    "item's number, or NONE."
)


class ModelClassifier:
    """A :class:`Classifier` backed by a chat model: one short completion per reading."""

    def __init__(self, model: Model, store: Store, *, governance: Governance | None = None) -> None:
        self.store = store
        limits = Limits(max_steps=1, max_output_tokens=8)
        self.loop = AgentLoop(model, Toolbox([]), governance or Governance(limits))

    def _ask(self, system: str, reply: str) -> str:
        # No tools and no conversation: the context is only there for the loop's bookkeeping.
        context = ToolContext(self.store, "classifier", "", "", "")
        request = RunRequest(
            agent="classifier",
            messages=(ChatMessage("system", system), ChatMessage("user", reply)),
            context=context,
        )
        try:
            return self.loop.run(request).text.strip().upper()
        except Exception:  # a classifier that fails reads nothing
            log.exception("the reply classifier failed")
            return ""

    def yes_no(self, question: str, reply: str) -> bool | None:
        said = re.sub(r"[^A-Z]", "", self._ask(_YES_NO_PROMPT.format(question=question), reply))
        return {"YES": True, "NO": False}.get(said)

    def pick(self, question: str, options: Sequence[str], reply: str) -> int | None:
        items = "\n".join(f"{i}. {item}" for i, item in enumerate(options, 1))
        said = self._ask(_PICK_PROMPT.format(question=question, items=items), reply)
        found = re.fullmatch(r"#?(\d{1,3})\.?", said)
        return int(found.group(1)) if found else None


def enable(pipeline: Pipeline, classifier: Classifier | None) -> None:
    """Use ``classifier`` for the unsure readings of ``pipeline`` (``None`` turns it off)."""
    stage = pipeline.stage("classify")
    if not isinstance(stage, ClassifyStage):
        raise TypeError("this pipeline's classify stage does not take a classifier")
    stage.classifier = classifier
