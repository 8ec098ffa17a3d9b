"""Compiles a SystemRDL file with systemrdl-compiler (the reference SystemRDL 2.0 front end)
and prints its registers as JSON: name, byte address, software access, and fields with bit
range and reset value."""
import json
import sys

from systemrdl import RDLCompiler, RDLListener, RDLWalker
from systemrdl.node import FieldNode


class Collect(RDLListener):
    def __init__(self):
        self.regs = []

    def enter_Reg(self, node):
        fields = []
        for f in node.fields():
            fields.append({"name": f.inst_name, "lsb": f.lsb, "msb": f.msb, "reset": f.get_property("reset"),
                           "sw_writable": f.is_sw_writable})
        self.regs.append({"name": node.inst_name, "addr": node.absolute_address, "fields": fields})


rdlc = RDLCompiler()
rdlc.compile_file(sys.argv[1])
root = rdlc.elaborate()
listener = Collect()
RDLWalker().walk(root, listener)
print(json.dumps(listener.regs))
