"""The screens' contents: a conversation (history, requests, message box), the pending
inbox across conversations, and the conversation list.

Both views are drawn from the app's state, which is filled from the server; a view holds no
request of its own that the server has not sent.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Button, Footer, Input, Label, ListItem, ListView, Static

from pawflow.errors import PawFlowError
from pawflow.records import Interaction, Message
from pawflow.tui.blocks import Host, RequestBlock

ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "notification": "bold yellow"}

WAKEUP_TEXT = {
    "answered": "{agent} has your answer and carries on.",
    "cancelled": "{agent} was told the request was cancelled.",
    "expired": "{agent} was told the request expired unanswered.",
}


def wakeup_sentence(message: Message) -> str | None:
    """What an agent was woken with, as the web chat says it; None for other messages.

    The line itself (``[agent:…] [confirmation:…] …``) is written for the agent's model.
    """
    data = message.data or {}
    if message.role != "system" or not data.get("wakeup") or data.get("error"):
        return None
    agent = message.author.removeprefix("agent:") or "The agent"
    template = WAKEUP_TEXT.get(str(data.get("status")), WAKEUP_TEXT["answered"])
    return template.format(agent=agent)


class MessageItem(Static):
    DEFAULT_CSS = "MessageItem { margin: 1 0 0 0; }"

    def __init__(self, message: Message) -> None:
        super().__init__(id=f"message-{message.id}", classes="message")
        self.message = message

    def on_mount(self) -> None:
        sentence = wakeup_sentence(self.message)
        if sentence is not None:
            self.update(Text(sentence, style="italic dim"))
            return
        style = ROLE_STYLE.get(self.message.role, "bold")
        who = Text(self.message.author or self.message.role, style=style)
        self.update(Group(who, Markdown(self.message.content)))


def introduced(message: Message) -> str | None:
    """The request an agent's reply introduces (its ``data.request_id``), if any: its block
    goes right after the reply, as in the web chat, though the request was made first."""
    found = (message.data or {}).get("request_id")
    return found if message.role == "assistant" and isinstance(found, str) else None


def kept_block(
    shown: dict[str | None, Widget], record: Interaction, host: Host, *, in_inbox: bool = False
) -> RequestBlock:
    """The block shown for ``record`` brought up to date, or a new one when there is none or
    it cannot show the record as it now is."""
    block = shown.get(f"request-{record.id}")
    if isinstance(block, RequestBlock) and block.takes(record):
        return block
    return RequestBlock(record, host, in_inbox=in_inbox)


async def arrange(container: Widget, wanted: Sequence[Widget]) -> bool:
    """Make ``container``'s children ``wanted``, in that order, touching what is already
    there as little as possible: children not wanted are removed, the ones kept are moved
    into place (never remounted, so what is typed in them and the focus stay) and the new
    ones are mounted where they go. True when something was mounted."""
    keep = set(wanted)
    gone = [child for child in container.children if child not in keep]
    if gone:
        await container.remove_children(gone)
    staying = [widget for widget in wanted if widget.parent is container]
    if list(container.children) != staying:
        for earlier, later in itertools.pairwise(staying):
            container.move_child(later, after=earlier)
    mounted = False
    previous: Widget | None = None
    run: list[Widget] = []
    for item in [*wanted, None]:
        if item is not None and item.parent is not container:
            run.append(item)
            continue
        if run:
            if previous is not None:
                await container.mount_all(run, after=previous)
            elif item is not None:
                await container.mount_all(run, before=item)
            else:
                await container.mount_all(run)
            mounted, run = True, []
        previous = item
    return mounted


class ConversationView(Vertical):
    """One conversation: its messages and requests in the order they came, and a message box.

    Items are placed by creation time, then messages before requests of the same moment; a
    request an agent's reply introduces comes right after that reply.
    """

    DEFAULT_CSS = """
    ConversationView { width: 1fr; }
    ConversationView #history { height: 1fr; padding: 0 1; }
    ConversationView #composer { dock: bottom; }
    ConversationView #conversation-title { background: $boost; padding: 0 1; }
    """

    def __init__(self, host: Host) -> None:
        super().__init__(id="conversation")
        self.host = host
        self.conversation_id: str | None = None
        self.shown_messages: set[str] = set()
        self.anchors: dict[str, str] = {}
        """A request's id → the id of the reply that introduced it."""

    def compose(self) -> Any:
        yield Static(
            "Pick a conversation (Ctrl+L), or start one (Ctrl+O).", id="conversation-title"
        )
        yield VerticalScroll(id="history")
        yield Input(placeholder="Message (Enter sends)", id="composer")

    @property
    def history(self) -> VerticalScroll:
        return self.query_one("#history", VerticalScroll)

    async def show(
        self, conversation_id: str, title: str, messages: list[Message], records: list[Interaction]
    ) -> None:
        """Draw the conversation from what the server just returned.

        The conversation already shown is reconciled with it, not redrawn: the messages and
        blocks that did not change keep their widgets (what is being typed in a pending
        request, and the focus, stay), a request that changed is updated in its block, what
        is new is added in its place and what is gone is removed.
        """
        if conversation_id != self.conversation_id:
            await self.history.remove_children()
        self.conversation_id = conversation_id
        self.query_one("#conversation-title", Static).update(f"[b]{escape(title)}[/b]")
        history = self.history
        self.anchors = {}
        keys: dict[str, tuple[Any, int, int, str]] = {}
        for m in messages:
            keys[m.id] = (m.created_at, 0, m.seq, "")
            request_id = introduced(m)
            if request_id is not None:
                self.anchors[request_id] = m.id
        items: list[tuple[tuple[Any, int, int, str], Message | Interaction]] = [
            (keys[m.id], m) for m in messages
        ]
        for r in records:
            anchor = self.anchors.get(r.id)
            at = (r.created_at, 1, 0, r.id) if anchor is None else (*keys[anchor][:3], r.id)
            items.append((at, r))
        items.sort(key=lambda item: item[0])
        self.shown_messages = {m.id for m in messages}
        shown = {child.id: child for child in history.children}
        widgets: list[Widget] = []
        for _, thing in items:
            if isinstance(thing, Message):
                item = shown.get(f"message-{thing.id}")
                same = isinstance(item, MessageItem) and item.message == thing
                widgets.append(item if same and item is not None else MessageItem(thing))
            else:
                widgets.append(kept_block(shown, thing, self.host))
        if await arrange(history, widgets):
            history.scroll_end(animate=False)

    async def add_message(self, message: Message) -> None:
        if message.conversation_id != self.conversation_id or message.id in self.shown_messages:
            return
        self.shown_messages.add(message.id)
        item = MessageItem(message)
        await self.history.mount(item)
        request_id = introduced(message)
        if request_id is not None:
            self.anchors[request_id] = message.id
            for block in self.history.query(f"#request-{request_id}").results(RequestBlock):
                self.history.move_child(block, after=item)  # drawn when it was asked
        self.history.scroll_end(animate=False)

    async def add_or_update(self, record: Interaction) -> None:
        if record.conversation_id != self.conversation_id:
            return
        found = self.history.query(f"#request-{record.id}")
        if found:
            for block in found.results(RequestBlock):
                block.update_record(record)
            return
        anchor = self.anchors.get(record.id)
        after = self.history.query(f"#message-{anchor}") if anchor else None
        block = RequestBlock(record, self.host)
        if after:
            await self.history.mount(block, after=after.first())
        else:
            await self.history.mount(block)
        self.history.scroll_end(animate=False)

    def blocks(self) -> list[RequestBlock]:
        return list(self.history.query(RequestBlock))


class InboxScreen(Screen[None]):
    """Every pending request of the user, across conversations, oldest first. Several
    confirms are ticked (Ctrl+T) and decided together (Ctrl+Y: yes, Ctrl+B: no), each
    answered on its own; the ones refused are listed with why."""

    DEFAULT_CSS = """
    InboxScreen #inbox-title { background: $boost; padding: 0 1; }
    InboxScreen #bulk { padding: 0 1; color: $text-muted; }
    InboxScreen #bulk.refused { color: $warning; }
    InboxScreen #inbox { padding: 0 1; }
    InboxScreen RequestBlock.ticked { border: double $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("ctrl+n", "app.next_request", "Next request"),
        Binding("ctrl+t", "tick", "Tick"),
        Binding("ctrl+y", "decide(True)", "Yes to ticked"),
        Binding("ctrl+b", "decide(False)", "No to ticked"),
    ]

    def __init__(self, host: Host, pending: list[Interaction]) -> None:
        super().__init__(id="inbox-screen")
        self.host = host
        self.initial = pending
        self.ticked: list[str] = []

    def compose(self) -> Any:
        yield Static("", id="inbox-title")
        yield Static(BULK_HINT, id="bulk")
        yield VerticalScroll(id="inbox")
        yield Footer()

    # -- deciding several at once ----------------------------------------------------------

    def _focused_block(self) -> RequestBlock | None:
        node: DOMNode | None = self.focused
        while node is not None and not isinstance(node, RequestBlock):
            node = node.parent
        return node

    def action_tick(self) -> None:
        """Tick the focused request, or untick it: a confirm that waits for your answer."""
        block = self._focused_block()
        record = None if block is None else block.record
        if (
            block is None
            or record is None
            or record.status != "pending"
            or record.kind != "confirm"
            or self.host.waits_for_others(record)
        ):
            self.notify("Only a confirm that waits for your answer can be ticked.")
            return
        if record.id in self.ticked:
            self.ticked.remove(record.id)
            block.remove_class("ticked")
        else:
            self.ticked.append(record.id)
            block.add_class("ticked")
        self._say(f"{len(self.ticked)} ticked · {BULK_HINT}" if self.ticked else BULK_HINT)

    async def action_decide(self, answer: bool) -> None:
        """Give ``answer`` to every ticked request, each on its own (``respond_each``)."""
        if not self.ticked:
            self.notify("Tick the confirms to decide first (Ctrl+T).")
            return
        asked = {block.record.id: block.record for block in self.blocks()}
        ids = list(self.ticked)
        try:
            answered, refused = await asyncio.to_thread(
                self.host.client.respond_each, ids, answer, via="button"
            )
        except PawFlowError as exc:
            self._say(f"Nothing was answered: {exc}", refused=True)
            return
        for record in answered:
            self.host.record_changed(record)
        self.ticked = [item["request_id"] for item in refused]
        for block in self.blocks():
            block.set_class(block.record.id in self.ticked, "ticked")
        said = f"{'Yes' if answer else 'No'} to {len(answered)} of {len(ids)}."
        lines = [
            f"Not answered: '{_question(asked.get(str(item['request_id'])))}' — {item['error']}"
            for item in refused
        ]
        self._say("\n".join([said, *lines]), refused=bool(refused))

    def _say(self, text: str, *, refused: bool = False) -> None:
        bulk = self.query_one("#bulk", Static)
        bulk.update(escape(text))
        bulk.set_class(refused, "refused")

    async def on_mount(self) -> None:
        await self.refill(self.initial)
        # Opened to answer: the first request takes the focus (Ctrl+N goes on to the next).
        for block in self.blocks():
            if block.focus_answer():
                break

    async def refill(self, pending: list[Interaction]) -> None:
        """Show exactly ``pending`` (the server's list); closed ones stay until refilled.
        The blocks still pending are kept as they are (what is typed in them, the focus)."""
        inbox = self.query_one("#inbox", VerticalScroll)
        self.set_count(len(pending))
        shown = {child.id: child for child in inbox.children}
        if not pending:
            empty = shown.get("inbox-empty")
            await arrange(inbox, [empty or Static("Nothing is waiting for you.", id="inbox-empty")])
            return
        self.ticked = [i for i in self.ticked if i in {r.id for r in pending}]
        blocks = [kept_block(shown, r, self.host, in_inbox=True) for r in pending]
        for block in blocks:
            block.set_class(block.record.id in self.ticked, "ticked")
        await arrange(inbox, blocks)

    def set_count(self, count: int) -> None:
        self.query_one("#inbox-title", Static).update(
            f"[b]Pending[/b] · {count} waiting for your answer (Esc goes back)"
        )

    async def add_or_update(self, record: Interaction) -> None:
        inbox = self.query_one("#inbox", VerticalScroll)
        found = inbox.query(f"#request-{record.id}")
        if found:
            for block in found.results(RequestBlock):
                block.update_record(record)
        elif record.status == "pending":
            for empty in inbox.query("#inbox-empty"):
                await empty.remove()
            await inbox.mount(RequestBlock(record, self.host, in_inbox=True))

    def blocks(self) -> list[RequestBlock]:
        return list(self.query(RequestBlock))

    def shown_ids(self) -> set[str]:
        return {block.record.id for block in self.blocks()}


BULK_HINT = "Ctrl+T ticks a confirm · Ctrl+Y: yes to the ticked · Ctrl+B: no to the ticked"
"""How to decide several requests at once, as the pending list says it."""


def _question(record: Interaction | None) -> str:
    return "a request" if record is None else " ".join(record.message.split())[:80]


WHY = {"mine": "assigned to you", "groups": "assigned to your group", "claimed": "claimed by you"}


class AssignedScreen(InboxScreen):
    """The pending requests assigned to the user (by name, through a group, or claimed by
    them), soonest due first, each under why it waits for them."""

    def __init__(self, host: Host, items: list[tuple[Interaction, str]]) -> None:
        items = [(record, why) for record, why in items if why != "own"]
        super().__init__(host, [record for record, _ in items])
        self.why = {record.id: why for record, why in items}

    async def refill(self, pending: list[Interaction]) -> None:
        inbox = self.query_one("#inbox", VerticalScroll)
        await inbox.remove_children()
        self.set_count(len(pending))
        if not pending:
            await inbox.mount(Static("Nothing is assigned to you.", id="inbox-empty"))
            return
        widgets: list[Static | RequestBlock] = []
        for record in pending:
            why = WHY.get(self.why.get(record.id, ""), "")
            widgets.append(Static(f"[dim]{why}[/dim]", classes="why"))
            widgets.append(RequestBlock(record, self.host, in_inbox=True))
        await inbox.mount_all(widgets)

    def set_count(self, count: int) -> None:
        self.query_one("#inbox-title", Static).update(
            f"[b]Assigned[/b] · {count} waiting for you, your groups or your claim (Esc goes back)"
        )

    async def add_or_update(self, record: Interaction) -> None:
        """Only what is shown changes here: a new request may not be assigned to them."""
        for block in self.query(f"#request-{record.id}").results(RequestBlock):
            block.update_record(record)


class RefusedScreen(ModalScreen[bool]):
    """The server does not accept the token: why, the fix (the message every command gives),
    and an offer to quit (dismissed with True) or to stay (False)."""

    DEFAULT_CSS = """
    RefusedScreen { align: center middle; }
    RefusedScreen > Vertical {
        width: 80; max-width: 100%; height: auto; padding: 1 2;
        border: thick $error; background: $surface;
    }
    RefusedScreen #refused-title { text-style: bold; color: $error; }
    RefusedScreen #refused-message { margin: 1 0; }
    RefusedScreen Horizontal { height: auto; }
    RefusedScreen Button { margin-right: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "choose(True)", "Quit"),
        Binding("escape", "choose(False)", "Stay"),
    ]
    AUTO_FOCUS = "#refused-quit"

    def __init__(self, message: str) -> None:
        super().__init__(id="refused")
        self.message = message

    def compose(self) -> Any:
        with Vertical():
            yield Static("The server does not accept your token", id="refused-title")
            yield Static(Text(self.message), id="refused-message")
            with Horizontal():
                yield Button("Quit", id="refused-quit", variant="error")
                yield Button("Stay", id="refused-stay")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "refused-quit")

    def action_choose(self, quit_app: bool) -> None:
        self.dismiss(quit_app)


class ConversationList(ListView):
    """The user's conversations, with how many requests wait in each."""

    DEFAULT_CSS = "ConversationList { width: 30; border-right: solid $panel; }"

    def __init__(self) -> None:
        super().__init__(id="conversations")
        self.ids: list[str] = []

    async def fill(self, rows: list[tuple[str, str, int]], current: str | None) -> None:
        """``rows``: (id, title, pending count)."""
        index = self.index
        await self.clear()
        self.ids = [row[0] for row in rows]
        items = []
        for conversation_id, title, count in rows:
            badge = f" [reverse] {count} [/]" if count else ""
            items.append(ListItem(Label(f"{escape(title)}{badge}"), name=conversation_id))
        await self.extend(items)
        if current in self.ids:
            self.index = self.ids.index(current)
        elif index is not None and index < len(self.ids):
            self.index = index
