"""External AXI4-Lite test bench (cocotb + cocotbext-axi on Icarus) for weft's register window.

It binds to the public port names (s_axil_*, clk, rst) of a 4x2x1 node or of the stand-alone
window and checks the register map of docs/contract.md: the ID register, scratch and coordinate registers written and read back, the torus
dimensions, and SLVERR on unmapped addresses and on writes to read-only registers.
"""
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp


async def start(dut):
    cocotb.start_soon(Clock(dut.clk, 4, units="ns").start())
    master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    return master


async def read32(master, addr):
    resp = await master.read(addr, 4)
    return int.from_bytes(resp.data, "little"), resp.resp


async def write32(master, addr, value):
    resp = await master.write(addr, value.to_bytes(4, "little"))
    return resp.resp


@cocotb.test()
async def register_map(dut):
    master = await start(dut)
    assert await read32(master, 0x000) == (0x57454654, AxiResp.OKAY)
    dims = await read32(master, 0x00C)
    assert dims == (4 | 2 << 8 | 1 << 16, AxiResp.OKAY), dims
    assert await read32(master, 0x010) == (0, AxiResp.OKAY)
    rng = random.Random(5)
    for _ in range(50):
        value = rng.getrandbits(32)
        assert await write32(master, 0x010, value) == AxiResp.OKAY
        assert await read32(master, 0x010) == (value, AxiResp.OKAY)
    coords = 3 | 1 << 8 | 0 << 16
    assert await write32(master, 0x008, coords) == AxiResp.OKAY
    assert await read32(master, 0x008) == (coords, AxiResp.OKAY)
    if hasattr(dut, "local_x"):  # the stand-alone window shows the coordinates it holds
        assert (int(dut.local_x.value), int(dut.local_y.value), int(dut.local_z.value)) == (3, 1, 0)


@cocotb.test()
async def slverr_on_unmapped_and_read_only(dut):
    master = await start(dut)
    for addr in (0x014, 0x0F0, 0x800, 0xFFC):
        data, resp = await read32(master, addr)
        assert (data, resp) == (0, AxiResp.SLVERR), (hex(addr), data, resp)
        assert await write32(master, addr, 0x12345678) == AxiResp.SLVERR, hex(addr)
    for addr in (0x000, 0x004, 0x00C, 0x100):
        assert await write32(master, addr, 0xFFFFFFFF) == AxiResp.SLVERR, hex(addr)
    assert await read32(master, 0x000) == (0x57454654, AxiResp.OKAY)
    assert await read32(master, 0x00C) == (4 | 2 << 8 | 1 << 16, AxiResp.OKAY)
