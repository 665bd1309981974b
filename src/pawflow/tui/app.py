"""``pawflow chat``: the conversation in a terminal, live, with every kind answerable.

The app talks to the server only through :class:`pawflow.client.Client`. What it shows comes
from the server: conversations, history and pending requests are read through the actions
on start, after every reconnect and on a ``reset``; between those, the event stream keeps
them current (a request answered anywhere closes here too).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message as TextualMessage
from textual.widgets import Footer, Input, ListView, Static
from textual.worker import Worker, WorkerState, get_current_worker

from pawflow.client import Client, ServerEvent
from pawflow.errors import PawFlowError, TokenRefused
from pawflow.records import Conversation, Interaction, Message
from pawflow.tui.approvals import rules_command
from pawflow.tui.blocks import RequestBlock
from pawflow.tui.live import CONNECTION_TEXT, Connection, LiveHandlers, LiveStream
from pawflow.tui.state import ChatState
from pawflow.tui.views import (
    AssignedScreen,
    ConversationList,
    ConversationView,
    InboxScreen,
    RefusedScreen,
)

INTERACTION_EVENTS = frozenset({"interaction_request", "interaction_answered"})


class LiveState(TextualMessage):
    def __init__(self, state: Connection, reason: str) -> None:
        super().__init__()
        self.state = state
        self.reason = reason


class LiveEvent(TextualMessage):
    def __init__(self, event: ServerEvent) -> None:
        super().__init__()
        self.event = event


class Resync(TextualMessage):
    """Re-read everything from the server (after a reconnect or a ``reset``)."""


class Hydrated(TextualMessage):
    """What the read ``worker`` found, for the app to draw on its own loop."""

    def __init__(
        self,
        worker: Worker[Any],
        user: str,
        conversations: list[Conversation],
        records: list[Interaction],
        opened: tuple[str, list[Message], list[Interaction]] | None,
        waiting: list[tuple[Interaction, str, list[str]]] | None = None,
    ) -> None:
        super().__init__()
        self.waiting = waiting or []
        self.worker = worker
        self.user = user
        self.conversations = conversations
        self.records = records
        self.opened = opened


class ReadFailed(TextualMessage):
    """The read ``worker`` could not read from the server (and said so)."""

    def __init__(self, worker: Worker[Any]) -> None:
        super().__init__()
        self.worker = worker


class ChatApp(App[None]):
    TITLE = "PawFlow"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #status { background: $primary-background; color: $text; padding: 0 1; height: 1; }
    #main { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+p", "pending", "Pending inbox"),
        Binding("ctrl+g", "assigned", "Assigned to me"),
        Binding("ctrl+n", "next_request", "Next request"),
        Binding("ctrl+l", "focus_list", "Conversations"),
        Binding("ctrl+o", "new_conversation", "New conversation"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(
        self,
        client: Client,
        *,
        conversation_id: str | None = None,
        events_client: Client | None = None,
        read_timeout: float = 45.0,
    ) -> None:
        super().__init__()
        self.client = client
        self.state = ChatState()
        self.start_conversation = conversation_id
        self.connection = Connection.CONNECTING
        self.connection_reason = ""
        self.hydrations = 0
        # The latest read from the server; while one is in flight, live events are held
        # (``held``) and applied once what it read is drawn, so that a read begun before an
        # event never draws over it. What an earlier read found is not drawn.
        self.reading: Worker[Any] | None = None
        self.held: list[ServerEvent] | None = None
        # The stream holds its connection for as long as it lives: a client of its own.
        self.owns_events_client = events_client is None
        self.events_client = events_client or Client(
            client.server,
            _token_of(client),
            timeout=client.http.timeout.connect or 30.0,
            token_source=client.token_source,
        )
        self.refusal: str | None = None
        """Why the server refused the token (the message every command gives), once it has."""
        self.live = LiveStream(
            self.events_client,
            LiveHandlers(
                on_state=lambda state, reason: self.post_message(LiveState(state, reason)),
                on_event=lambda event: self.post_message(LiveEvent(event)),
                on_reconnected=lambda: self.post_message(Resync()),
                on_reset=lambda: self.post_message(Resync()),
            ),
            read_timeout=read_timeout,
        )

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> Any:
        # Kept by reference: queries look at the active screen, which may be the inbox.
        self.status = Static("", id="status")
        self.conversation_list = ConversationList()
        self.view = ConversationView(self)
        yield self.status
        with Horizontal(id="main"):
            yield self.conversation_list
            yield self.view
        yield Footer()

    def inbox(self) -> InboxScreen | None:
        """The pending inbox, if open (not the assigned list)."""
        for screen in self.screen_stack:
            if type(screen) is InboxScreen:
                return screen
        return None

    def assigned(self) -> AssignedScreen | None:
        """The list of what is assigned to the user, if open."""
        for screen in self.screen_stack:
            if isinstance(screen, AssignedScreen):
                return screen
        return None

    def on_mount(self) -> None:
        self.show_status()
        self.hydrate()
        self.live.start()

    def on_unmount(self) -> None:
        self.live.stop()
        if self.owns_events_client:
            self.events_client.close()  # wakes the stream's thread, which then ends

    def show_status(self) -> None:
        """The header: who, the connection, the Pending count, then why a connection is
        down (last, so that a long reason is what gets cut, never the count)."""
        count = len(self.state.pending())
        line = Text("PawFlow", style="bold", no_wrap=True, overflow="ellipsis")
        if self.state.user:
            line.append(f" · {self.state.user}")
        line.append(" · ")
        line.append(*CONNECTION_TEXT[self.connection])
        line.append(" · Pending ")
        line.append(f" {count} " if count else "0", style="reverse" if count else "")
        line.append(" (Ctrl+P)")
        if self.connection is not Connection.LIVE and self.connection_reason:
            line.append(f" · {self.connection_reason}", style="dim")
        self.status.update(line)
        inbox = self.inbox()
        if inbox is not None:
            inbox.set_count(count)

    # -- what blocks ask of the app ----------------------------------------------------------

    @property
    def user(self) -> str:
        return self.state.user

    def record_changed(self, record: Interaction) -> None:
        self.call_later(self.apply_record, record)  # drawn on the app's loop, as live events

    def conversation_title(self, conversation_id: str) -> str:
        return self.state.title(conversation_id)

    def waits_for_others(self, record: Interaction) -> list[str] | None:
        return self.state.waits_for_others(record)

    # -- reading from the server -------------------------------------------------------------

    # A worker only reads; what it read is drawn by the app's own loop (on_hydrated). A worker
    # is cancelled when a newer resync replaces it or the app quits, and one cancelled while
    # it awaited a redraw would cancel the widgets being removed, leaving the screen half
    # redrawn and the app unable to close.
    def hydrate(self) -> Worker[Any]:
        """Read conversations, pending requests and the open conversation from the server
        (replacing a read in flight), and draw them."""
        if self.held is None:
            self.held = []
        self.reading = self._read()
        return self.reading

    @work(group="hydrate", exclusive=True)
    async def _read(self) -> None:
        client, worker = self.client, get_current_worker()
        try:
            user = self.state.user or await asyncio.to_thread(client.whoami)
            conversations = await asyncio.to_thread(client.list_conversations)
            pending = await asyncio.to_thread(
                lambda: list(client.iter_interactions(status="pending"))
            )
            waiting = await asyncio.to_thread(client.list_waiting, "visible")
            pending += [record for record, _, _ in waiting]
            stale = [
                await asyncio.to_thread(client.get_interaction, request_id)
                for request_id in self.state.stale_pending(pending)
            ]
        except TokenRefused as exc:
            self.token_refused(exc.message)
            self.post_message(ReadFailed(worker))
            return
        except PawFlowError as exc:
            self.notify(f"Cannot read from the server: {exc}", severity="error")
            self.post_message(ReadFailed(worker))
            return
        current = self.view.conversation_id or self.start_conversation
        if current is None and conversations:
            current = conversations[0].id
        opened = None
        if current is not None:
            read = await self.read_conversation(current)
            opened = None if read is None else (current, *read)
        records = [*pending, *stale]
        self.post_message(Hydrated(worker, user, conversations, records, opened, waiting))

    async def on_hydrated(self, message: Hydrated) -> None:
        if message.worker is not self.reading:
            return  # a newer read is on its way, and draws what is current
        self.state.user = message.user
        self.state.set_conversations(message.conversations)
        self.state.set_waiting(message.waiting)
        for record in message.records:
            self.state.upsert(record)
        if message.opened is not None:
            await self.show_conversation(*message.opened)
        await self.refresh_lists()
        inbox = self.inbox()
        if inbox is not None:
            await inbox.refill(self.state.pending())
        await self.release_held()
        self.hydrations += 1

    async def on_read_failed(self, message: ReadFailed) -> None:
        if message.worker is self.reading:
            await self.release_held()

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The latest read called off (not replaced: a newer one would be the latest) or
        # broken draws nothing: what it held back is applied now.
        if event.worker is self.reading and event.state in (
            WorkerState.CANCELLED,
            WorkerState.ERROR,
        ):
            await self.release_held()

    async def release_held(self) -> None:
        """Apply the live events that arrived while the latest read was in flight."""
        held, self.held = self.held or [], None
        for event in held:
            await self.apply_event(event)

    async def open_conversation(self, conversation_id: str) -> None:
        read = await self.read_conversation(conversation_id)
        if read is not None:
            await self.show_conversation(conversation_id, *read)
            await self.refresh_lists()

    async def read_conversation(
        self, conversation_id: str
    ) -> tuple[list[Message], list[Interaction]] | None:
        """A conversation's history and requests from the server; None (and said) if not."""
        client = self.client
        try:
            messages = await asyncio.to_thread(client.get_history, conversation_id)
            records = await asyncio.to_thread(
                lambda: list(client.iter_interactions(conversation_id=conversation_id))
            )
        except PawFlowError as exc:
            self.notify(f"Cannot open that conversation: {exc}", severity="error")
            return None
        return messages, records

    async def show_conversation(
        self, conversation_id: str, messages: list[Message], records: list[Interaction]
    ) -> None:
        for record in records:
            self.state.upsert(record)
        shown = [self.state.records.get(r.id, r) for r in records]
        await self.view.show(conversation_id, self.state.title(conversation_id), messages, shown)

    async def refresh_lists(self) -> None:
        rows = [
            (c.id, self.state.title(c.id), len(self.state.pending(c.id)))
            for c in self.state.conversations.values()
        ]
        await self.conversation_list.fill(rows, self.view.conversation_id)
        self.show_status()

    async def apply_record(self, record: Interaction) -> None:
        if not self.state.upsert(record):
            return
        current = self.state.records[record.id]
        await self.view.add_or_update(current)
        inbox = self.inbox()
        if inbox is not None and (
            self.state.waits_for_me(current) or current.id in inbox.shown_ids()
        ):
            await inbox.add_or_update(current)
        assigned = self.assigned()
        if assigned is not None:
            await assigned.add_or_update(current)
        await self.refresh_lists()

    # -- the live stream ---------------------------------------------------------------------

    def on_live_state(self, message: LiveState) -> None:
        self.connection = message.state
        self.connection_reason = message.reason
        self.show_status()
        if message.state is Connection.REFUSED:
            self.token_refused(message.reason)

    def token_refused(self, message: str) -> None:
        """Say once that the server does not accept the token, and offer to quit (the
        command then prints the message again, for the fix to be copied)."""
        if self.refusal is not None:
            return
        self.refusal = message

        def chosen(quit_app: bool | None) -> None:
            if quit_app:
                self.exit()

        self.push_screen(RefusedScreen(message), chosen)

    async def on_live_event(self, message: LiveEvent) -> None:
        if self.held is not None and self.reading is not None and self.reading.is_cancelled:
            await self.release_held()  # the latest read was called off, maybe before it began
        if self.held is not None:
            self.held.append(message.event)
        else:
            await self.apply_event(message.event)

    async def apply_event(self, event: ServerEvent) -> None:
        if event.type in INTERACTION_EVENTS and isinstance(event.data, dict):
            await self.apply_record(Interaction.model_validate(event.data))
        elif event.type == "message" and isinstance(event.data, dict):
            await self.view.add_message(Message.model_validate(event.data))
        elif event.type == "notification" and isinstance(event.data, dict):
            title = str(event.data.get("title") or "Notification")
            urgent = event.data.get("urgency") == "urgent"
            self.notify(
                str(event.data.get("message", "")),
                title=title,
                severity="warning" if urgent else "information",
            )

    def on_resync(self, message: Resync) -> None:
        self.hydrate()

    # -- the person's actions ----------------------------------------------------------------

    async def on_list_view_selected(self, event: ListView.Selected) -> None:
        if event.item.name:
            await self.open_conversation(event.item.name)
            self.view.query_one("#composer", Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "composer":
            return
        text = event.value.strip()
        conversation_id = self.view.conversation_id
        if not text:
            return
        if conversation_id is None:
            self.notify("Open or start a conversation first (Ctrl+L, Ctrl+O).")
            return
        event.input.value = ""
        said = await asyncio.to_thread(rules_command, self.client, conversation_id, text)
        if said is not None:
            self.notify(said, title="Approval rules", timeout=15)
            return
        try:
            sent = await asyncio.to_thread(self.client.send_message, conversation_id, text)
        except PawFlowError as exc:
            event.input.value = text
            self.notify(f"Not sent: {exc}", severity="error")
            return
        await self.view.add_message(sent)

    async def action_pending(self) -> None:
        if self.inbox() is not None:
            self.pop_screen()
            return
        await self.push_screen(InboxScreen(self, self.state.pending()))

    async def action_assigned(self) -> None:
        if isinstance(self.screen, AssignedScreen):
            self.pop_screen()
            return
        try:
            items = await asyncio.to_thread(self.client.list_inbox, "assigned")
        except PawFlowError as exc:
            self.notify(f"Not loaded: {exc}", severity="error")
            return
        await self.push_screen(AssignedScreen(self, items))

    def action_focus_list(self) -> None:
        self.conversation_list.focus()

    async def action_new_conversation(self) -> None:
        try:
            created = await asyncio.to_thread(self.client.create_conversation, "New conversation")
        except PawFlowError as exc:
            self.notify(f"Cannot start a conversation: {exc}", severity="error")
            return
        self.state.conversations[created.id] = created
        await self.open_conversation(created.id)
        self.view.query_one("#composer", Input).focus()

    def action_next_request(self) -> None:
        """Focus the answer of the next pending request after the focused one (wrapping)."""
        inbox = self.screen if isinstance(self.screen, InboxScreen) else self.inbox()
        blocks: list[RequestBlock] = inbox.blocks() if inbox is not None else self.view.blocks()
        open_blocks = [b for b in blocks if b.record.status == "pending"]
        if not open_blocks:
            self.notify("No request is waiting here.")
            return
        focused = self.focused
        start = 0
        for index, block in enumerate(open_blocks):
            if focused is not None and focused in block.query("*"):
                start = index + 1
        for block in open_blocks[start:] + open_blocks[:start]:
            if block.focus_answer():
                block.scroll_visible()
                return


def _token_of(client: Client) -> str | None:
    header = client.http.headers.get("authorization", "")
    return header.removeprefix("Bearer ") or None
