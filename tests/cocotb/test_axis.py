"""External AXI4-Stream test bench (cocotb + cocotbext-axi on Icarus) for weft's stream primitives.

It knows nothing of weft: it binds to the public port names (s_axis_*, m_axis_*, clk, rst) and
checks frames against what it sent, with random back-pressure on both sides, then checks that
with both sides always ready one beat moves per cycle.
"""
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource


def pauses(seed, percent):
    rng = random.Random(seed)
    while True:
        yield rng.random() < percent / 100


async def start(dut):
    cocotb.start_soon(Clock(dut.clk, 4, units="ns").start())
    source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    return source, sink


@cocotb.test()
async def frames_survive_random_back_pressure(dut):
    source, sink = await start(dut)
    source.set_pause_generator(pauses(1, 40))
    sink.set_pause_generator(pauses(2, 40))
    rng = random.Random(3)
    frames = [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 96))) for _ in range(300)]
    for frame in frames:
        await source.send(AxiStreamFrame(frame))
    for i, frame in enumerate(frames):
        received = await sink.recv()
        assert bytes(received.tdata) == frame, f"frame {i} differs"
    await ClockCycles(dut.clk, 20)
    assert sink.empty(), "extra data after the last frame"


@cocotb.test()
async def one_beat_per_cycle_when_both_sides_ready(dut):
    source, sink = await start(dut)
    beats = 1000
    transfers = []

    async def monitor():
        cycle = 0
        while True:
            await RisingEdge(dut.clk)
            cycle += 1
            if dut.m_axis_tvalid.value == 1 and dut.m_axis_tready.value == 1:
                transfers.append(cycle)

    cocotb.start_soon(monitor())
    await source.send(AxiStreamFrame(bytes(i % 251 for i in range(beats * 16))))
    received = await sink.recv()
    assert len(received.tdata) == beats * 16
    assert len(transfers) == beats
    assert transfers[-1] - transfers[0] == beats - 1, f"{beats} beats took {transfers[-1] - transfers[0] + 1} cycles"
