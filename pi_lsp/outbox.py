"""Each connection's outgoing messages, bounded: a client that stops reading is dropped.

Without a bound, a client that keeps asking for big results but never reads them makes the server
buffer every answer until it runs out of memory, for all editors. Here one sender task writes one
message at a time and waits until the socket has taken it; the messages waiting behind it may hold at
most :data:`MAX_QUEUED_BYTES` (or one single message, when that message alone is bigger). A message
that would go beyond ends the connection: ``disconnect`` is called (the transport then cancels the
connection's pending requests and closes it) and nothing more is queued.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

MAX_QUEUED_BYTES = 16 * 1024 * 1024


class BoundedOutbox:
    """A protocol writer (``write``/``close``) that queues message bodies for ``send``."""

    def __init__(
        self,
        send: Callable[[bytes], Awaitable[None]],
        disconnect: Callable[[], None],
        *,
        limit: int = MAX_QUEUED_BYTES,
        name: str = "client",
        write_now: Callable[[bytes], bool] | None = None,
    ) -> None:
        """``write_now``: hands a message straight to the transport when nothing waits before it
        (True: taken); a stream of small messages then skips the hop through the sender task."""
        self._send = send
        self._write_now = write_now
        self._disconnect = disconnect
        self._limit = limit
        self._name = name
        self._queue: collections.deque[bytes] = collections.deque()
        self._queued_bytes = 0
        self._wakeup = asyncio.Event()
        self._closed = False
        self._sending = False
        self.overflowed = False
        self._task = asyncio.ensure_future(self._run())

    @property
    def queued_bytes(self) -> int:
        """Bytes waiting behind the message being sent."""
        return self._queued_bytes

    def write(self, body: bytes) -> None:
        """Queue one message body; over the bound, the connection is ended instead."""
        if self._closed:
            return
        if self._write_now is not None and not self._queue and not self._sending and self._write_now(body):
            return
        if self._queue and self._queued_bytes + len(body) > self._limit:
            self._overflow(len(body))
            return
        self._queue.append(body)
        self._queued_bytes += len(body)
        self._wakeup.set()

    def _overflow(self, size: int) -> None:
        log.warning(
            "%s is not reading its messages (%d bytes waiting, %d more to send): disconnecting it",
            self._name,
            self._queued_bytes,
            size,
        )
        self.overflowed = True
        self._discard()
        self._disconnect()

    def _discard(self) -> None:
        self._closed = True
        self._queue.clear()
        self._queued_bytes = 0
        self._task.cancel()

    def close(self) -> None:
        """Stop sending; what is still queued is dropped (the connection is going away)."""
        self._discard()

    async def flush(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until everything queued so far has been sent."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (self._queue or self._sending) and not self._closed and loop.time() < deadline:
            await asyncio.sleep(0.01)

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._queue:
                body = self._queue.popleft()
                self._queued_bytes -= len(body)
                self._sending = True
                try:
                    await self._send(body)
                except (ConnectionError, OSError) as error:
                    log.info("%s went away while being sent a message: %s", self._name, error)
                    self._discard()
                    self._disconnect()
                    return
                finally:
                    self._sending = False
