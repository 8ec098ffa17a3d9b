"""Reads a generated component.xml with two independent IP-XACT readers and prints JSON:
ipyxact's view (bus interfaces with their physical ports, model ports with widths), and the
register map as peakrdl-ipxact imports it into systemrdl-compiler, beside the register map of
the generated SystemRDL compiled by systemrdl-compiler."""
import json
import sys
import xml.etree.ElementTree as ET

import ipyxact.ipyxact as ipyxact
from peakrdl_ipxact import IPXACTImporter
from systemrdl import RDLCompiler


def registers(root):
    regs = []
    for reg in root.top.descendants():
        if reg.__class__.__name__ != "RegNode":
            continue
        fields = [[f.lsb, f.msb, f.get_property("reset"), f.is_sw_writable] for f in reg.fields()]
        regs.append([reg.inst_name, reg.absolute_address, sorted(fields)])
    return regs


component_path, rdl_path = sys.argv[1:]
component = ipyxact.Component()
with open(component_path) as f:
    component.load(f)
buses = {b.name: [m.physicalPort.name for m in b.portMaps.portMap] for b in component.busInterfaces.busInterface}
# ipyxact models wire vectors the 1685-2014 way; widths come from the XML itself.
ns = {"spirit": "http://www.spiritconsortium.org/XMLSchema/SPIRIT/1685-2009"}
tree = ET.parse(component_path)
ports = {}
for p in component.model.ports.port:
    node = tree.find(f".//spirit:port[spirit:name='{p.name}']/spirit:wire/spirit:vector", ns)
    width = 1 if node is None else int(node.find("spirit:left", ns).text) - int(node.find("spirit:right", ns).text) + 1
    ports[p.name] = [p.wire.direction, width]

imported = RDLCompiler()
importer = IPXACTImporter(imported)
importer.import_file(component_path)
ipxact_root = imported.elaborate()

direct = RDLCompiler()
direct.compile_file(rdl_path)
rdl_root = direct.elaborate()

print(json.dumps({"buses": buses, "ports": ports, "ipxact_regs": registers(ipxact_root), "rdl_regs": registers(rdl_root)}))
