"""The naive AT-SPI reader: one D-Bus call at a time, depth first, straight from the rules.

The driver reads the same screen with batched calls, level by level
(:meth:`spatialobs.screen.drivers.atspi.AtspiDriver.screen`); this reader is
what it is checked against, and the peer of its benchmark. A screen holds the
objects that are SHOWING with a non-empty box on the screen, under the showing
top-level windows (only the last modal one when one is up); a table that manages
its descendants is read cell by cell from the cell under its top-left corner,
row by row, until a row starts below the table and, in a row, until a cell
starts right of it; a cell's text is its text content, or, when it has no Text
interface, its name, else its children's texts.
"""

from __future__ import annotations

from typing import List

from spatialobs.screen.drivers import atspi as A
from spatialobs.screen.model import Element


def windows(d) -> list:
    bus, out = d._bus, []
    for app in bus.call(A._ROOT, A._ACC, "GetChildren")[0]:
        app = (str(app[0]), str(app[1]))
        try:
            kids = bus.call(app, A._ACC, "GetChildren", timeout=3.0)[0]
        except (A._CallError, A.DriverFault):
            continue
        for w in kids:
            w = (str(w[0]), str(w[1]))
            try:
                st = list(bus.call(w, A._ACC, "GetState")[0])
                if A._bit(st, A.ST_SHOWING):
                    out.append((w, str(bus.call(w, A._ACC, "GetRoleName")[0]), st))
            except A._CallError:
                continue
    return out


def get_text(d, ref) -> str:
    """The first 120 characters of ``ref``'s text; raises ``_CallError`` when it has no Text interface."""
    n = int(d._bus.prop(ref, A._TEXT, "CharacterCount"))
    return str(d._bus.call(ref, A._TEXT, "GetText", "ii", (0, min(n, 120)))[0]) if n > 0 else ""


def read_screen(d) -> List[Element]:
    """The elements of ``d``'s current screen, read one call at a time."""
    wins = windows(d)
    modal = [w for w in wins if w[1] in ("dialog", "alert", "file chooser") or A._bit(w[2], A.ST_MODAL)]
    if modal:
        wins = modal[-1:]
    out: List[Element] = []
    for ref, _, _ in wins:
        _walk(d, ref, out, 0)
    return out


def _walk(d, ref, out, depth) -> None:
    bus = d._bus
    if depth > 40:
        return
    try:
        st = bus.call(ref, A._ACC, "GetState")[0]
        if not A._bit(st, A.ST_SHOWING):
            return
        role = str(bus.call(ref, A._ACC, "GetRoleName")[0])
        ifaces = tuple(bus.call(ref, A._ACC, "GetInterfaces")[0])
        _element(d, ref, role, st, ifaces, out)
        if A._bit(st, A.ST_MANAGES_DESCENDANTS):
            if A._TABLE in ifaces:
                _table(d, ref, out)
            return
        kids = bus.call(ref, A._ACC, "GetChildren")[0]
    except A._CallError:
        return
    for k in kids:
        _walk(d, (str(k[0]), str(k[1])), out, depth + 1)


def _element(d, ref, role, st, ifaces, out) -> None:
    bus = d._bus
    if A._COMP not in ifaces:
        return
    x, y, w, h = bus.call(ref, A._COMP, "GetExtents", "u", (0,))[0]
    x0, y0 = max(float(x), 0.0), max(float(y), 0.0)
    x1, y1 = min(float(x + w), float(d.width)), min(float(y + h), float(d.height))
    if w <= 0 or h <= 0 or x1 <= x0 or y1 <= y0:
        return
    text = str(bus.prop(ref, A._ACC, "Name") or "").strip()
    if role in A.TEXT_ROLES and A._TEXT in ifaces:
        text = get_text(d, ref).strip() or text
    text = d._stable(text, role)
    sensitive = A._bit(st, A.ST_SENSITIVE) or A._bit(st, A.ST_ENABLED)
    editable = A._bit(st, A.ST_EDITABLE) and sensitive
    clickable = sensitive and role not in A.NO_CLICK_ROLES and (A._ACTION in ifaces or role in A.CLICK_ROLES)
    # the states kept: those of STATE_NAMES that are set, then "disabled" for an object neither sensitive nor enabled
    states = tuple(name for bit, name in A.STATE_NAMES if A._bit(st, bit)) + (() if sensitive else ("disabled",))
    out.append(Element((x0, y0, x1, y1), role, text or None, editable, clickable, f"{ref[0]}|{ref[1]}", states))


def _table(d, ref, out) -> None:
    bus = d._bus
    tx, ty, tw, th = bus.call(ref, A._COMP, "GetExtents", "u", (0,))[0]
    try:
        first = bus.call(ref, A._COMP, "GetAccessibleAtPoint", "iiu", (tx + 2, ty + 2, 0))[0]
        idx = int(bus.call((str(first[0]), str(first[1])), A._ACC, "GetIndexInParent")[0])
        r0 = int(bus.call(ref, A._TABLE, "GetRowAtIndex", "i", (idx,))[0])
        c0 = int(bus.call(ref, A._TABLE, "GetColumnAtIndex", "i", (idx,))[0])
    except (A._CallError, TypeError, ValueError):
        r0 = c0 = 0
    r0, c0 = max(r0, 0), max(c0, 0)
    for r in range(r0, r0 + d.max_rows):
        for c in range(c0, c0 + d.max_cols):
            try:
                cell = bus.call(ref, A._TABLE, "GetAccessibleAt", "ii", (r, c))[0]
                cref = (str(cell[0]), str(cell[1]))
                x, y, w, h = bus.call(cref, A._COMP, "GetExtents", "u", (0,))[0]
                if y >= ty + th:
                    return
                if x >= tx + tw:
                    break
            except A._CallError:
                break
            try:
                text = get_text(d, cref)
            except A._CallError:
                text = _cell_name(d, cref)
            text = d._stable(text.strip(), "table cell")
            x0, y0 = max(float(x), float(tx)), max(float(y), float(ty))
            x1, y1 = min(float(x + w), float(tx + tw)), min(float(y + h), float(ty + th))
            if x1 <= x0 or y1 <= y0:
                continue
            out.append(Element((x0, y0, x1, y1), "table cell", text or None, True, True, f"{cref[0]}|{cref[1]}"))


def _cell_name(d, ref) -> str:
    # a cell with no Text interface: its name, else the texts of its children, space-separated
    bus = d._bus
    try:
        name = str(bus.prop(ref, A._ACC, "Name") or "")
    except A._CallError:
        name = ""
    if name.strip():
        return name
    try:
        kids = bus.call(ref, A._ACC, "GetChildren")[0]
    except A._CallError:
        return name
    parts = []
    for k in kids:
        try:
            t = get_text(d, (str(k[0]), str(k[1]))).strip()
        except A._CallError:
            continue
        if t:
            parts.append(t)
    return " ".join(parts)
