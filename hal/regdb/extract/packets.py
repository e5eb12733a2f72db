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


ROW_ORDINAL = re.compile(r"^(?:\d+|\d+ to .*|[Nn](?:\+\d+)?|\d+ ?\+ .*|)$")


def layout_rows(lines: list[str], start: int, end: int, first_col: str) -> list[tuple[str, str, str]]:
    """(ordinal, field, description) rows of the first table whose header row starts with
    `first_col` between `start` and `end`, without the HEADER row. A row without an ordinal
    continues the previous dword and keeps its ordinal; a row without a field name continues
    the previous row's description. Blank lines inside the table (page breaks) are skipped: the
    table ends at the first line that is not a row."""
    rows: list[tuple[str, str, str]] = []
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
    while i < end:
        if not lines[i].strip():
            # A page break inside the table: go on when a row follows.
            nxt = next((j for j in range(i, end) if lines[j].strip()), end)
            if nxt >= end or "\t" not in lines[nxt] or not ROW_ORDINAL.match(lines[nxt].split("\t")[0].strip()):
                break
            i = nxt
            continue
        cols = [c.strip() for c in lines[i].split("\t")]
        i += 1
        if set(cols[0]) <= {"-"} and cols[0]:
            continue
        if len(cols) < 2 or not ROW_ORDINAL.match(cols[0]):
            break
        if not cols[1]:
            if rows and len(cols) > 2 and cols[2]:
                o, f, d = rows[-1]
                rows[-1] = (o, f, f"{d} {cols[2]}")
            continue
        ordinal = cols[0] or ordinal
        field = cols[1]
        if field.strip("[]").upper() == "HEADER":
            continue
        rows.append((ordinal, field, cols[2] if len(cols) > 2 else ""))
    return rows


# A bit range at the start of a description: "[31:2] - ", "bit [2:0] ", "Bits [31:0] + ",
# "Bit [8] ".
LEADING_RANGE = re.compile(r"(?i)^\s*(?:bits?\s*)?\[(\d+)(?::(\d+))?\]")
# Any "[m:n]" range with the words after it.
ANY_RANGE = re.compile(r"(?i)(?:bits?\s*)?\[(\d+)(?::(\d+))?\]\s*-?\s*(\w*)")


def field_name(raw: str) -> str:
    """UPPER_SNAKE name of a body field as the table names it ("BASE_ADDR_LO]", "Default Reset
    Control", "SEM_ADDR[31:2]")."""
    name = re.sub(r"\[.*?\]", "", raw).strip("[]{} ")
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()


def row_fields(ordinal: str, raw_field: str, description: str, shared: bool) -> list[dict]:
    """The fields of one body row, where the document gives their bits plainly:
    - the name column carries the range (R5xx "SEM_ADDR[31:2]");
    - one name and the description starts with its range (skipping leading reserved ranges:
      "[31:16] - Must be programmed to zero ... [15:0] - Offset");
    - one name and no range at all: the whole dword, unless another row shares the dword;
    - several names, each written NAME[m:n] or NAME: [m:n] in the description (EVENT_INDEX[11:8],
      R5xx "TOP: [15:0]").
    Other rows (ranges that depend on another field, free text) get no field here; the
    reviewed corrections give them."""
    if not ordinal.isdigit():
        return []
    dword = int(ordinal)

    def field(name: str, msb: str, lsb: str | None) -> dict:
        hi = int(msb)
        return {"name": name, "dword": dword, "msb": hi, "lsb": int(lsb) if lsb is not None else hi}

    if raw_field.startswith("{"):
        return []  # a data block of any length (NOP)
    # R5xx writes a dword holding a register's value as "[VAP_VF_CNTL]", and a row spanning
    # several table lines as "[ONE_REG_WR" ... "DESTINATION]".
    raw_field = raw_field.strip()
    if raw_field.startswith("[") or raw_field.endswith("]") and "[" not in raw_field:
        raw_field = raw_field.removeprefix("[").removesuffix("]")
    in_name = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\[(\d+)(?::(\d+))?\]\s*", raw_field)
    if in_name:
        return [field(in_name.group(1).upper(), in_name.group(2), in_name.group(3))]
    names = raw_field.split()
    # "Default Reset Control" is one name; "HEIGHT TOP" and "Header_Dump_Base
    # Header_Dump_Swap" are two.
    if len(names) == 1 or not any("_" in n or n.isupper() for n in names):
        name = field_name(raw_field)
        if not name or not re.match(r"[A-Z]", name):
            return []
        if not re.search(r"\[\d+(?::\d+)?\]|\bBits? \d|\b\d+:\d+ -", description):
            return [] if shared else [{"name": name, "dword": dword, "msb": 31, "lsb": 0}]
        named = re.match(r"(?i)\s*" + re.escape(raw_field.strip()) + r":?\s*\[(\d+)(?::(\d+))?\]", description)
        if named:
            return [field(name, named.group(1), named.group(2))]
        if LEADING_RANGE.match(description):
            for m in ANY_RANGE.finditer(description):
                if m.group(3).lower() in ("reserved", "must"):
                    continue
                return [field(name, m.group(1), m.group(2))]
        return []
    found = []
    for n in names:
        m = re.search(re.escape(n) + r":?\s?\[(\d+)(?::(\d+))?\]", description)
        if not m:
            return []
        found.append(field(n, m.group(1), m.group(2)))
    return found


def body_fields(rows: list[tuple[str, str, str]]) -> list[dict]:
    fields = []
    ordinals = [o for o, _, _ in rows]
    for ordinal, raw, description in rows:
        fields += row_fields(ordinal, raw, description, ordinals.count(ordinal) > 1)
    return fields


def body_dwords(rows: list[tuple[str, str, str]]) -> tuple[int, int | None]:
    """(min, max) body dwords of a table: fixed when every row has a plain number (the header
    is dword 1), open-ended from the last numbered row on when a row is "3 to N" or "N"."""
    numbered = [int(o) for o, _, _ in rows if o.isdigit()]
    last = max(numbered, default=1) - 1
    if any(not o.isdigit() or f.startswith("{") for o, f, _ in rows):
        return (last, None)
    return (last, last)


def layout(rows: list[tuple[str, str, str]]) -> dict:
    """The body rows, fields and length of a packet from its table."""
    lo, hi = body_dwords(rows)
    return {
        "body": [(o, f) for o, f, _ in rows],
        "fields": body_fields(rows),
        "min_dwords": lo,
        "max_dwords": hi,
    }


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
                **layout(layout_rows(lines, at, nxt, "Ordinal")),
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
            **layout(layout_rows(lines, at, nxt, "DW")),
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


def load_corrections(family: str) -> dict:
    path = regdb.REGDB_DIR / "corrections" / f"{family}-packets.toml"
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    for kind in ("packet", "field", "drop_field", "length", "set_range"):
        for entry in data.get(kind, []):
            if not entry.get("reason"):
                raise regdb.ExtractError(f"{path}: every [[{kind}]] correction needs a reason: {entry}")
    return data


def load_opcodes(family: str) -> dict[str, dict]:
    return {o["name"]: o for o in load_corrections(family).get("opcode", [])}


FIELD_KEYS = ("dword", "msb", "lsb", "address_lsb", "alias_of", "values")


def apply_corrections(packets: list[dict], corrections: dict) -> list[dict]:
    """Add the packets the document omits, and apply the reviewed field, length and register
    range corrections (hal/regdb/corrections/<family>-packets.toml)."""
    for entry in corrections.get("packet", []):
        packets.append(
            {
                "name": entry["name"],
                "doc_name": entry["name"],
                "opcode": entry["opcode"],
                "opcode_source": entry["source"],
                "source": entry["source"],
                "section": "",
                "chips": entry.get("chips", ""),
                "description": entry["description"],
                "body": [],
                "fields": [dict(f) for f in entry.get("fields", [])],
                "min_dwords": entry["min_dwords"],
                "max_dwords": entry.get("max_dwords"),
            }
        )
    by_name = {p["name"]: p for p in packets}

    def packet(entry: dict) -> dict:
        if entry["packet"] not in by_name:
            raise regdb.ExtractError(f"correction for an unknown packet: {entry}")
        return by_name[entry["packet"]]

    for entry in corrections.get("drop_field", []):
        p = packet(entry)
        kept = [f for f in p["fields"] if f["name"] != entry["name"]]
        if len(kept) == len(p["fields"]):
            raise regdb.ExtractError(f"[[drop_field]] matches no extracted field: {entry}")
        p["fields"] = kept
    for entry in corrections.get("field", []):
        p = packet(entry)
        keys = {k: entry[k] for k in FIELD_KEYS if k in entry}
        match = [f for f in p["fields"] if f["name"] == entry["name"]]
        if match:
            match[0].update(keys)
        elif all(k in keys for k in ("dword", "msb", "lsb")):
            p["fields"].append({"name": entry["name"], **keys})
        else:
            raise regdb.ExtractError(f"[[field]] adds a field without dword/msb/lsb: {entry}")
    for entry in corrections.get("length", []):
        p = packet(entry)
        p["min_dwords"] = entry["min_dwords"]
        p["max_dwords"] = entry.get("max_dwords")
        if "only" in entry:
            p["only_dwords"] = entry["only"]
    for entry in corrections.get("set_range", []):
        p = packet(entry)
        p["register_range"] = {
            "start": entry["start"],
            "end": entry["end"],
            "legacy_zero": entry.get("legacy_zero", False),
            "source": entry["source"],
        }
    for p in packets:
        p["fields"].sort(key=lambda f: (f["dword"], -f["msb"], f["name"]))
    return packets


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
        if "source" in p:
            out.append(f"source = {quote(p['source'])}")
        out += [
            f"section = {quote(p['section'])}",
            f"chips = {quote(p['chips'])}",
            f"description = {quote(p['description'])}",
            f"min_dwords = {p['min_dwords']}",
        ]
        if p["max_dwords"] is not None:
            out.append(f"max_dwords = {p['max_dwords']}")
        if "only_dwords" in p:
            out.append(f"only_dwords = [{', '.join(str(n) for n in p['only_dwords'])}]")
        if "register_range" in p:
            r = p["register_range"]
            out += [
                "",
                "[packet.register_range]",
                f"start = 0x{r['start']:05x}",
                f"end = 0x{r['end']:05x}",
                f"legacy_zero = {'true' if r['legacy_zero'] else 'false'}",
                f"source = {quote(r['source'])}",
            ]
        for ordinal, field in p["body"]:
            out += ["", "[[packet.body]]", f"dword = {quote(ordinal)}", f"field = {quote(field)}"]
        for f in p["fields"]:
            out += [
                "",
                "[[packet.field]]",
                f"name = {quote(f['name'])}",
                f"dword = {f['dword']}",
                f"msb = {f['msb']}",
                f"lsb = {f['lsb']}",
            ]
            if "address_lsb" in f:
                out.append(f"address_lsb = {f['address_lsb']}")
            if "alias_of" in f:
                out.append(f"alias_of = {quote(f['alias_of'])}")
            for v in f.get("values", []):
                out += ["", "[[packet.field.value]]", f"name = {quote(v['name'])}", f"value = {v['value']}"]
    return "\n".join(out) + "\n"


def build(family: str, text: str) -> str:
    if family == "r5xx":
        packets = r5xx(text)
    else:
        packets = evergreen(text, load_opcodes(family))
    return to_toml(family, apply_corrections(packets, load_corrections(family)))
