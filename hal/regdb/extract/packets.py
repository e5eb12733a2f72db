"""Extract the type-3 packet tables (name, opcode, body layout, section, chips) from the documents.

    r5xx:      amd-r5xx-acceleration §6.2.1 (the summary table: name, IT_OPCODE, description),
               the packet's own section for its number and its Format table (body layout).
    evergreen: amd-evergreen-cayman-acceleration §9.2-§9.7 (one section per packet: its heading
               names the packet and the chips, its Packet Description table the body). The
               document gives no opcode values: they come from
               corrections/evergreen-packets.toml, each with its public source.

The result is hal/regdb/packets/<family>.toml, generated like the register databases (never
edited by hand) and turned into `baregpu_regs::<family>::packets` by regdb-gen.
"""

from __future__ import annotations

import re
import tomllib

import regdb

FAMILIES = {
    "r5xx": "amd-r5xx-acceleration.txt",
    "evergreen": "amd-evergreen-cayman-acceleration.txt",
}
DOC_LABELS = {
    "r5xx": "amd-r5xx-acceleration",
    "evergreen": "amd-evergreen-cayman-acceleration",
}

PACKETS_DIR = regdb.REGDB_DIR / "packets"


def rust_name(doc_name: str) -> str:
    """UPPER_SNAKE name of a packet: spaces become underscores ("DRAW INDEX AUTO")."""
    return re.sub(r"\s+", "_", doc_name.strip())


def layout_rows(lines: list[str], start: int, end: int, first_col: str) -> list[tuple[str, str]]:
    """(ordinal, field) rows of the first table whose header row starts with `first_col`
    between `start` and `end`, without the HEADER row. A row without an ordinal continues the
    previous dword and keeps its ordinal."""
    rows: list[tuple[str, str]] = []
    end = min(end, len(lines))
    i = next((j for j in range(start, end) if lines[j].startswith(first_col + "\t")), None)
    if i is None:
        # §9.7.2 NOP's table has no column header: its rows follow the "Packet Description"
        # line (and a blank one).
        i = next((j for j in range(start, end) if "Packet Description" in lines[j]), end)
        while i + 1 < end and not lines[i + 1].strip():
            i += 1
    i += 1
    ordinal = ""
    while i < end and lines[i].strip():
        cols = [c.strip() for c in lines[i].split("\t")]
        i += 1
        if len(cols) < 2 or not cols[1] or set(cols[0]) <= {"-"} and cols[0]:
            continue
        ordinal = cols[0] or ordinal
        field = cols[1]
        if field.strip("[]").upper() == "HEADER":
            continue
        rows.append((ordinal, field))
    return rows


def r5xx(text: str) -> list[dict]:
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("6.2.1 ") and "Summary of packets" in l)
    end = next(i for i, l in enumerate(lines) if i > start and l.startswith("6.2.2 "))
    table = []
    for line in lines[start:end]:
        cols = line.split("\t")
        if len(cols) >= 3 and re.fullmatch(r"0x[0-9A-Fa-f]{2}", cols[1].strip()):
            table.append((cols[0].strip(), int(cols[1].strip(), 16), cols[2].strip()))
    if len(table) != 28:
        raise regdb.ExtractError(f"§6.2.1: expected 28 packets, found {len(table)}")
    # Sections: "6.2.2.1 NOP", "6.2.4 <u>PRED_EXEC</u>".
    heading = re.compile(r"^(6\.2\.[2-5](?:\.\d+)?) (?:<u>)?([0-9A-Z_]+)(?:</u>)?\s*$")
    sections: dict[str, tuple[str, int]] = {}
    for i, line in enumerate(lines):
        m = heading.match(line)
        if m and m.group(2) not in sections:
            sections[m.group(2)] = (m.group(1), i)
    starts = sorted(i for _, i in sections.values())
    packets = []
    for name, opcode, description in table:
        if name not in sections:
            raise regdb.ExtractError(f"§6.2: no section for {name}")
        section, at = sections[name]
        nxt = next((s for s in starts if s > at), len(lines))
        packets.append(
            {
                "name": rust_name(name),
                "doc_name": name,
                "opcode": opcode,
                "section": section,
                "chips": "R5xx",
                "description": description,
                "opcode_source": "amd-r5xx-acceleration §6.2.1",
                "body": layout_rows(lines, at, nxt, "Ordinal"),
            }
        )
    return packets


def evergreen(text: str, opcodes: dict[str, dict]) -> list[dict]:
    lines = text.split("\n")
    # "9.3.4 **DRAW INDEX AUTO - R7xx/Evergreen/Cayman**", possibly after another heading on
    # the same line ("9.2 Initialization Packets**9.2.1 ME_INITIALIZE - ...").
    heading = re.compile(r"(9\.[2-7]\.\d+) \**([A-Z][A-Z0-9_ ]*?) - ([A-Za-z0-9/]+)\**\s*$")
    found = []
    for i, line in enumerate(lines):
        m = heading.search(line)
        if m:
            found.append((i, m.group(1), m.group(2).strip(), m.group(3)))
    packets = []
    for k, (at, section, doc_name, chips) in enumerate(found):
        nxt = found[k + 1][0] if k + 1 < len(found) else min(at + 40, len(lines))
        name = rust_name(doc_name)
        entry = {
            "name": name,
            "doc_name": doc_name,
            "section": section,
            "chips": chips,
            "description": "",
            "body": layout_rows(lines, at, nxt, "DW"),
        }
        # The first sentence after the heading describes the packet.
        for line in lines[at + 1 : nxt]:
            if line.strip():
                entry["description"] = re.split(r"(?<=\.)\s", line.strip(), maxsplit=1)[0]
                break
        fact = opcodes.get(name)
        if fact is not None:
            entry["opcode"] = fact["opcode"]
            entry["opcode_source"] = fact["source"]
        packets.append(entry)
    if len(packets) != 48:
        raise regdb.ExtractError(f"§9: expected 48 packet sections, found {len(packets)}")
    unknown = set(opcodes) - {p["name"] for p in packets}
    if unknown:
        raise regdb.ExtractError(f"opcodes for packets §9 does not have: {sorted(unknown)}")
    return packets


def load_opcodes(family: str) -> dict[str, dict]:
    path = regdb.REGDB_DIR / "corrections" / f"{family}-packets.toml"
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {o["name"]: o for o in data.get("opcode", [])}


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_toml(family: str, packets: list[dict]) -> str:
    out = [
        f"# Generated by hal/regdb/extract/extract.py from {FAMILIES[family]}; do not edit.",
        "",
        "[meta]",
        f"family = {quote(family)}",
        f"document = {quote(FAMILIES[family])}",
        f"doc_label = {quote(DOC_LABELS[family])}",
    ]
    for p in packets:
        out += ["", "[[packet]]", f"name = {quote(p['name'])}", f"doc_name = {quote(p['doc_name'])}"]
        if "opcode" in p:
            out.append(f"opcode = 0x{p['opcode']:02x}")
            out.append(f"opcode_source = {quote(p['opcode_source'])}")
        out += [
            f"section = {quote(p['section'])}",
            f"chips = {quote(p['chips'])}",
            f"description = {quote(p['description'])}",
        ]
        for ordinal, field in p["body"]:
            out += ["", "[[packet.body]]", f"dword = {quote(ordinal)}", f"field = {quote(field)}"]
    return "\n".join(out) + "\n"


def build(family: str, text: str) -> str:
    if family == "r5xx":
        packets = r5xx(text)
    else:
        packets = evergreen(text, load_opcodes(family))
    return to_toml(family, packets)
