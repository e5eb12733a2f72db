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
    "vc4": "broadcom-videocore-iv-3d.txt",
}
DOC_LABELS = {
    "r5xx": "amd-r5xx-acceleration",
    "evergreen": "amd-evergreen-cayman-acceleration",
    "vc4": "broadcom-videocore-iv-3d",
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
    for kind in ("packet", "field", "drop_field", "length", "set_range", "record", "text"):
        for entry in data.get(kind, []):
            if not entry.get("reason"):
                raise regdb.ExtractError(f"{path}: every [[{kind}]] correction needs a reason: {entry}")
    return data


def load_opcodes(family: str) -> dict[str, dict]:
    return {o["name"]: o for o in load_corrections(family).get("opcode", [])}


FIELD_KEYS = ("dword", "msb", "lsb", "address_lsb", "alias_of", "values")


def correct_fields(corrections: dict, owner, keys_of, position: tuple[str, ...]) -> None:
    """Apply [[drop_field]] and [[field]] corrections to the packet or record `owner(entry)`
    names: a [[field]] sets `keys_of(entry)` on the field of its name, or adds the field when
    the keys place it (`position`: dword/msb/lsb, byte/msb/lsb); its `source`, if any, goes
    with it."""
    for entry in corrections.get("drop_field", []):
        o = owner(entry)
        kept = [f for f in o["fields"] if f["name"] != entry["name"]]
        if len(kept) == len(o["fields"]):
            raise regdb.ExtractError(f"[[drop_field]] matches no extracted field: {entry}")
        o["fields"] = kept
    for entry in corrections.get("field", []):
        o = owner(entry)
        keys = keys_of(entry)
        match = [f for f in o["fields"] if f["name"] == entry["name"]]
        if match:
            target = match[0]
            target.update(keys)
        elif all(k in keys for k in position):
            target = {"name": entry["name"], **keys}
            o["fields"].append(target)
        else:
            raise regdb.ExtractError(f"[[field]] adds a field without {'/'.join(position)}: {entry}")
        if "source" in entry:
            target["source"] = entry["source"]


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

    correct_fields(corrections, packet, lambda e: {k: e[k] for k in FIELD_KEYS if k in e}, ("dword", "msb", "lsb"))
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
    if family == "vc4":
        corrections = load_corrections(family)
        text = regdb.apply_text_corrections(text, corrections)
        return vc4_toml(apply_record_corrections(vc4(text), corrections))
    if family == "r5xx":
        packets = r5xx(text)
    else:
        packets = evergreen(text, load_opcodes(family))
    return to_toml(family, apply_corrections(packets, load_corrections(family)))


# --- VideoCore IV control records (broadcom-videocore-iv-3d §9, Table 38) --------------------
#
# A control record is one id byte, then fields at bit offsets counted from the byte after it
# (little-endian). Table 38 gives, per record, its code and name (with a "(B)" or "(R)" suffix
# for records only a binning or only a rendering list may hold), then one row per field: width
# in bits, offset, description. The record's size is not printed: it is the id byte plus the
# bytes up to the highest field bit. A field becomes `byte` (of the record, the id byte is 0),
# `lsb`/`msb` (bits from that byte's bit 0, so a 32-bit field at offset 40 is byte 6, bits 31:0).

VC4_TABLE = "Table 38: Control Record IDs and Data Summary"
CELL_SPLIT_DUPLICATE = re.compile(r"\s+")


def record_heading(cells: list[str]) -> str:
    """The record name of a heading row: OCR splits it over cells, sometimes inside a word
    ("Flus", "h (Add Re", ...), sometimes repeating a piece ("Wai", "Wait on Semaphore", or a
    tail again after the name). Cells are joined without a separator; a cell the next one
    starts with, or one the name already ends with, is dropped. What this cannot mend, the
    reviewed [[text]] corrections restore."""
    parts = [c for c in cells if c]
    name = ""
    for i, c in enumerate(parts):
        if i + 1 < len(parts) and parts[i + 1].startswith(c):
            continue
        if name and name.endswith(c):
            continue
        name += c
    return CELL_SPLIT_DUPLICATE.sub(" ", name).strip()


def record_name(doc_name: str) -> str:
    """UPPER_SNAKE name of a record: the document's name without its parenthesised remarks and
    list suffix ("Flush (Add Return-from-sub-list ...) (B)" -> FLUSH)."""
    bare = re.sub(r"\([^)]*\)?", " ", doc_name)
    return re.sub(r"[^A-Za-z0-9]+", "_", bare).strip("_").upper()


def record_field_name(description: str) -> str:
    """UPPER_SNAKE name of a field: its description up to the first remark ("Memory address of
    Tile. In multiples of 16 bytes." -> MEMORY_ADDRESS_OF_TILE; "Clear Z<sub>S</sub> (uint24)"
    -> CLEAR_ZS)."""
    text = re.sub(r"</?(?:sub|sup)>", "", description)
    text = re.sub(r"\s+(?=[A-Z]?\b[a-zA-Z]?\b)", " ", text)
    head = re.split(r"[(.:]", text, maxsplit=1)[0]
    return re.sub(r"[^A-Za-z0-9]+", "_", head).strip("_").upper()


ENUM_LIST = re.compile(r"(\d+(?:\s*,\s*\d+)+)\s*=\s*([^)]*)")
ENUM_RANGE = re.compile(r"(\d+)\s*-\s*(\d+)\s*=\s*([^)]*)")
ENUM_PAIRS = re.compile(r"(\d+)\s*=\s*([^,)]+)")


def enum_values(text: str) -> list[dict]:
    """The values a description lists: "0,1,2 = a, b, c", "0-7 = a, ..., h" or "0=a, 1 = b".
    "Reserved" and "N/A" entries name nothing."""
    pairs: list[tuple[int, str]] = []
    m = ENUM_LIST.search(text) or ENUM_RANGE.search(text)
    if m and m.re is ENUM_LIST:
        numbers = [int(n) for n in m.group(1).split(",")]
        names = [n.strip() for n in m.group(2).rstrip(". ").split(",")]
        if len(names) == len(numbers):
            pairs = list(zip(numbers, names))
    elif m:
        first, last = int(m.group(1)), int(m.group(2))
        names = [n.strip() for n in m.group(3).rstrip(". ").split(",")]
        if len(names) == last - first + 1:
            pairs = list(zip(range(first, last + 1), names))
    else:
        found = ENUM_PAIRS.findall(text)
        if len(found) >= 2:
            pairs = [(int(n), v) for n, v in found]
    values = []
    for n, v in pairs:
        name = re.sub(r"[^A-Za-z0-9]+", "_", v).strip("_").upper()
        if name and name not in ("RESERVED", "N_A"):
            values.append({"name": name, "value": n})
    return values


ADDRESS_SHIFT = re.compile(r"(?i)multiples? of (\d+) bytes|(\d+)-byte multiple")


def table38_rows(text: str) -> list[tuple[str, list[str]]]:
    """Rows of Table 38 (all its continuation pages): ("code", cells) for a record heading,
    ("field", [bits, offset, description]) for a field, ("more", [text]) for a description's
    continuation line."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(VC4_TABLE))
    end = next(i for i, l in enumerate(lines) if i > start and "Primitive List Formats" in l)
    rows = []
    for line in lines[start:end]:
        cells = [c.strip() for c in line.split("\t")]
        code = re.sub(r"</?mark>", "", cells[0])
        if re.fullmatch(r"\d+", code) and len(cells) > 1:
            rows.append(("code", [code] + cells[1:]))
        elif code == "" and len(cells) > 2 and re.fullmatch(r"(?:>=)?\d+", cells[1]):
            rows.append(("field", [cells[1], cells[2], " ".join(c for c in cells[3:] if c)]))
        elif code == "" and len(cells) > 3 and not cells[1] and not cells[2]:
            more = " ".join(c for c in cells[3:] if c)
            if more:
                rows.append(("more", [more]))
    return rows


def vc4(text: str) -> list[dict]:
    records: list[dict] = []
    for kind, cells in table38_rows(text):
        if kind == "code":
            doc_name = record_heading(cells[1:])
            lists = "binning" if doc_name.endswith("(B)") else "rendering" if doc_name.endswith("(R)") else "both"
            records.append(
                {
                    "name": record_name(doc_name),
                    "doc_name": doc_name,
                    "opcode": int(cells[0]),
                    "lists": lists,
                    "fields": [],
                    "open_ended": False,
                }
            )
        elif kind == "field":
            r = records[-1]
            bits, offset, description = cells
            if bits.startswith(">=") or not description:
                # An escape-terminated list of any length (ids 42, 48, 49).
                r["open_ended"] = True
                continue
            if not offset.isdigit():
                if len(r["fields"]) or not bits.isdigit():
                    raise regdb.ExtractError(f"Table 38 id {r['opcode']}: field without an offset: {cells}")
                offset = "0"  # ids 16, 17: the only field, printed without its offset
            if description.lower() in ("unused", "not used"):
                r.setdefault("unused", []).append((int(bits), int(offset)))
                continue
            width, at = int(bits), int(offset)
            field = {
                "name": record_field_name(description),
                "description": description,
                "byte": 1 + at // 8,
                "lsb": at % 8,
                "msb": at % 8 + width - 1,
                "offset": at,
            }
            r["fields"].append(field)
        else:
            r = records[-1]
            if r["fields"]:
                r["fields"][-1]["description"] += " " + cells[0]
    out = []
    for r in records:
        if r["name"].startswith("RESERVED"):
            continue
        for f in r["fields"]:
            # The types the document writes after a field: "(float32)", "(sint16)"; "(uint16)"
            # and "(int8)" (tile numbers, never negative) stay unsigned.
            if "(float32)" in f["description"]:
                f["type"] = "float"
            elif re.search(r"\(sint\d+\)", f["description"]):
                f["type"] = "sint"
            values = enum_values(f["description"])
            if values and f["msb"] > f["lsb"]:
                f["values"] = values
            if "address" in f["description"].lower():
                m = ADDRESS_SHIFT.search(f["description"])
                shift = (int(m.group(1) or m.group(2)).bit_length() - 1) if m else 0
                # A field holding address bits from `shift` up (a 28-bit tile address in
                # multiples of 16 bytes: bits 31:4); a full-width field holds bits 31:0.
                f["address_lsb"] = shift if f["msb"] - f["lsb"] + 1 + shift == 32 else 0
        ends = [f["offset"] + f["msb"] - f["lsb"] + 1 for f in r["fields"]]
        ends += [w + o for w, o in r.get("unused", [])]
        r["bytes"] = 1 + (max(ends, default=0) + 7) // 8
        out.append(r)
    return out


def apply_record_corrections(records: list[dict], corrections: dict) -> list[dict]:
    """The reviewed record corrections (corrections/vc4-packets.toml): [[record]] sets keys of
    an extracted record (matched by opcode and name), [[field]] sets keys of a field or adds
    one, [[drop_field]] removes one; every entry has a reason, facts the document omits a
    public source."""
    by_key = {(r["opcode"], r["name"]): r for r in records}

    def record(entry: dict) -> dict:
        key = (entry["opcode"], entry["record"])
        if key not in by_key:
            raise regdb.ExtractError(f"correction for an unknown record: {entry}")
        return by_key[key]

    for entry in corrections.get("record", []):
        record(entry).update(entry["set"])
        if "source" in entry:
            record(entry)["source"] = entry["source"]
    correct_fields(corrections, record, lambda e: dict(e["set"]), ("byte", "msb", "lsb"))
    for r in records:
        r["fields"].sort(key=lambda f: (f["byte"], -f["msb"], f["name"]))
    return records


def vc4_toml(records: list[dict]) -> str:
    out = [
        f"# Generated by hal/regdb/extract/extract.py from {FAMILIES['vc4']}; do not edit.",
        "",
        "[meta]",
        'family = "vc4"',
        f"document = {quote(FAMILIES['vc4'])}",
        f"doc_label = {quote(DOC_LABELS['vc4'])}",
    ]
    for r in records:
        out += [
            "",
            "[[record]]",
            f"name = {quote(r['name'])}",
            f"doc_name = {quote(r['doc_name'])}",
            f"opcode = {r['opcode']}",
            'section = "9"',
            f"lists = {quote(r['lists'])}",
            f"bytes = {r['bytes']}",
        ]
        if r["open_ended"]:
            out.append("open_ended = true")
        if "source" in r:
            out.append(f"source = {quote(r['source'])}")
        for f in r["fields"]:
            out += [
                "",
                "[[record.field]]",
                f"name = {quote(f['name'])}",
                f"byte = {f['byte']}",
                f"msb = {f['msb']}",
                f"lsb = {f['lsb']}",
            ]
            for key in ("address_lsb", "type"):
                if key in f:
                    out.append(f"{key} = {quote(f[key]) if isinstance(f[key], str) else f[key]}")
            if "source" in f:
                out.append(f"source = {quote(f['source'])}")
            for v in f.get("values", []):
                out += ["", "[[record.field.value]]", f"name = {quote(v['name'])}", f"value = {v['value']}"]
    return "\n".join(out) + "\n"
