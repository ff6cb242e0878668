"""Under a drag, the page skips to the slider's latest value: the simulated page of
benchmarks/class_load.py keeps ipywidgets' throttle (packages/base/src/widget.ts:
one update in flight per model; presses meanwhile only replace the buffered
state, sent when the kernel's "idle" for the update in flight comes back).

This is why the panel itself does not skip: its kernel never has more than one
move of a slider waiting. No hub and no kernel here: the messages go to a fake
WebSocket and are read back in the kernel protocol's own wire format.
"""

from __future__ import annotations

import json

from jupyter_server.services.kernels.connection.base import deserialize_msg_from_ws_v1

from tools.class_student import Student


class FakeSocket:
    def __init__(self):
        self.frames = []

    def send_binary(self, frame):
        self.frames.append(frame)

    def moves(self) -> list[tuple[str, float]]:
        """(msg_id, value) of every slider update sent, in order."""
        out = []
        for frame in self.frames:
            channel, parts = deserialize_msg_from_ws_v1(frame)
            header, _, _, content = (json.loads(p) for p in parts[:4])
            assert channel == "shell" and header["msg_type"] == "comm_msg"
            assert content["data"]["method"] == "update" and content["comm_id"] == "slider"
            out.append((header["msg_id"], content["data"]["state"]["value"]))
        return out


class FakeHub:
    url, port = "http://127.0.0.1:1", 1


def page(throttle=True) -> Student:
    student = Student(FakeHub(), "student", "repo", "notebook.ipynb", throttle=throttle)
    student.ws = FakeSocket()
    student.slider, student.image = "slider", "image"
    student.low, student.high, student.step, student.value, student.direction = -2.0, 2.0, 0.1, 0.0, 1
    return student


def idle(student, msg_id):
    student._handle("iopub", "status", msg_id, {"execution_state": "idle"}, 0.0)


def test_presses_while_a_move_is_in_flight_send_only_the_latest_value():
    student = page()
    for _ in range(5):
        student.press()
    sent = student.ws.moves()
    assert [v for _, v in sent] == [0.1]  # the first press; 0.2 ... 0.5 wait
    idle(student, sent[0][0])
    sent = student.ws.moves()
    assert [v for _, v in sent] == [0.1, 0.5]  # 0.2, 0.3 and 0.4 are skipped
    idle(student, sent[1][0])
    assert len(student.ws.moves()) == 2  # nothing left to send
    student.press()
    assert [v for _, v in student.ws.moves()] == [0.1, 0.5, 0.6]  # idle again: a press goes at once


def test_an_idle_of_another_request_does_not_release_the_buffer():
    student = page()
    student.press()
    student.press()
    idle(student, "some-execute-request")
    assert len(student.ws.moves()) == 1


def test_the_last_values_picture_is_the_image_update_its_move_caused():
    student = page()
    for _ in range(3):
        student.press()
    first = student.ws.moves()[0][0]
    image = {"comm_id": "image", "data": {"method": "update", "state": {}, "buffer_paths": [["value"]]}}
    student._handle("iopub", "comm_msg", first, image, 1.0)
    assert student.last_value_answered(0.3) is None  # 0.3 still buffered
    idle(student, first)
    last = student.ws.moves()[-1][0]
    assert student.last_value_answered(0.3) is None  # sent, not drawn yet
    student._handle("iopub", "comm_msg", last, image, 2.5)
    idle(student, last)
    assert student.last_value_answered(0.3) == 2.5


def test_without_the_throttle_every_press_is_a_message():
    student = page(throttle=False)
    for _ in range(5):
        student.press()
    assert [v for _, v in student.ws.moves()] == [0.1, 0.2, 0.3, 0.4, 0.5]


def test_the_slider_turns_at_its_end():
    student = page()
    student.value = 1.9
    values = []
    for _ in range(3):
        student.press()
        values.append(student.value)
        idle(student, student.ws.moves()[-1][0])
    assert values == [2.0, 1.9, 1.8]
