"""``torch.dml.Stream`` / ``Event`` and the current-stream functions, shaped like ``torch.cuda``'s.

The guard (backend/csrc/runtime/guard.cpp) implements a stream as an id over the device's one WebGPU
queue: work on any stream runs in submission order, so waiting on another stream or event is always
already satisfied, and ``synchronize`` waits for the whole queue. These classes only bind
``torch.Stream`` / ``torch.Event`` to the dml device so CUDA-style code ports by renaming.
"""

from __future__ import annotations

import time
from typing import Any, Self

import torch

from torch_dml._device_index import DeviceLike, checked_index, device_index


class Stream(torch.Stream):
    """A stream on a dml device (the current one when ``device`` is None), as ``torch.cuda.Stream``.

    ``Stream(stream_id=..., device_index=..., device_type=...)`` wraps an existing stream instead of
    making a new one, as ``torch.Stream`` does.
    """

    def __new__(cls, device: DeviceLike = None, priority: int = 0, **kwargs: Any) -> Self:
        if kwargs:
            return super().__new__(cls, **kwargs)
        return super().__new__(cls, device=torch.device("dml", checked_index(device)), priority=priority)

    def record_event(self, event: torch.Event | None = None) -> torch.Event:
        """Records ``event`` (a new ``torch.dml.Event`` when None) on this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event


class Event(torch.Event):
    """An event on dml streams, as ``torch.cuda.Event``; it takes the device of the stream it is
    recorded on. ``enable_timing=True`` makes ``elapsed_time`` available (milliseconds between the
    completion of the work before each record)."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> Self:
        if interprocess:
            raise ValueError(
                "torch.dml.Event(interprocess=True): dml events cannot be shared between processes "
                "(WebGPU has no inter-process handles); synchronize in the producing process instead"
            )
        event = super().__new__(cls, device="dml", enable_timing=enable_timing, blocking=blocking)
        event._timed = enable_timing
        event._completed_at: float | None = None
        return event

    def record(self, stream: torch.Stream | None = None) -> None:
        super().record(stream)
        if self._timed:
            # A timed record waits for the work before it (guard.cpp), so now is when that work ended:
            # the same instant the guard stamps, on a clock elapsed_time below can read.
            self._completed_at = time.perf_counter()

    def elapsed_time(self, end_event: torch.Event) -> float:
        """Milliseconds from this event's record to ``end_event``'s; both need ``enable_timing=True``."""
        if type(end_event) is torch.Event:
            return super().elapsed_time(end_event)
        # torch.Event.elapsed_time accepts only an exact torch.Event as its argument (a type check in
        # torch/csrc/Event.cpp), so two torch.dml.Events are timed from their own record stamps.
        if not isinstance(end_event, Event):
            raise TypeError(f"torch.dml.Event.elapsed_time expects an event, got {type(end_event).__name__}")
        # ValueError with torch.Event's own sentences, so code that catches torch.Event's errors (or
        # torch.cuda.Event's, which are the same) catches these too.
        if not (self._timed and end_event._timed):
            raise ValueError(
                "Both events must be created with argument 'enable_timing=True'. "
                "(torch.dml.Event.elapsed_time: create them as torch.dml.Event(enable_timing=True))"
            )
        if self._completed_at is None or end_event._completed_at is None:
            raise ValueError(
                "Both events must be recorded before calculating elapsed time. "
                "(torch.dml.Event.elapsed_time: record them with event.record(stream) or "
                "torch.dml.Stream.record_event)"
            )
        return (end_event._completed_at - self._completed_at) * 1000.0


def _wrap(stream: torch.Stream) -> Stream:
    return Stream(stream_id=stream.stream_id, device_index=stream.device_index, device_type=stream.device_type)


def current_stream(device: DeviceLike = None) -> Stream:
    """The stream work on ``device`` (the current device when None) is queued on in this thread."""
    return _wrap(torch.accelerator.current_stream(checked_index(device)))


def default_stream(device: DeviceLike = None) -> Stream:
    """The device's default stream (id 0), current until ``set_stream`` or ``stream(...)`` changes it."""
    index = checked_index(device)
    device_type = torch.accelerator.current_stream(index).device_type
    return Stream(stream_id=0, device_index=index, device_type=device_type)


def set_stream(stream: torch.Stream | None) -> None:
    """Makes ``stream`` current on its device (and that device current); None does nothing, as in CUDA."""
    if stream is None:
        return
    if stream.device.type != "dml":
        raise ValueError(f"torch.dml.set_stream expects a dml stream, got one on {stream.device}")
    torch.accelerator.set_stream(stream)


class StreamContext:
    """Context manager that makes ``stream`` current inside the block, restoring the previous device
    and the previous stream of both devices on exit. ``None`` makes it do nothing."""

    def __init__(self, stream: torch.Stream | None) -> None:
        self.stream = stream
        self._device = -1
        self._previous: list[torch.Stream] = []

    def __enter__(self) -> torch.Stream | None:
        if self.stream is None:
            return None
        self._device = device_index(None)
        self._previous = [torch.accelerator.current_stream(self._device)]
        if self.stream.device_index != self._device:
            self._previous.append(torch.accelerator.current_stream(self.stream.device_index))
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc_info: object) -> None:
        if self.stream is None:
            return
        # The source device's stream last, so its device ends up current again.
        for previous in reversed(self._previous):
            torch.accelerator.set_stream(previous)


def stream(stream: torch.Stream | None) -> StreamContext:
    """``with torch.dml.stream(s):`` queues the block's work on ``s``, as ``torch.cuda.stream``."""
    return StreamContext(stream)
