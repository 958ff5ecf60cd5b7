"""The compact form of an observation: the same fields as its JSON in about a third of the bytes.

An agent builder works to a context budget. The compact form (``Observation.to_json(compact=True)``)
says everything :meth:`~spatialobs.canvas.Observation.to_dict` says, and :func:`expand` gives that
dict back exactly, but writes each id once:

* ``"v"``: the viewport ``[x, y, w, h]``; ``"om"``: omitted ``[objects, relations]``.
* ``"o"``: one array per object, ``[id, type, visibility, layer, parent, readingOrder, text, extra]``.
  ``visibility`` is a code (0 visible, 1 partial, 2 occluded, 3 offscreen_near, 4 offscreen_far);
  ``parent`` is the position of the parent's record in ``"o"`` when it is kept, its id when
  not, -1 for none; ``readingOrder`` -1 for none; ``text`` ``""`` for none. Trailing values
  that say nothing (an empty ``extra``, then an empty text, then ``readingOrder`` -1) are left
  out. ``extra`` holds the rarer fields under short keys: ``n`` name, ``s`` style, ``r``
  rotation, ``f`` flags (first letters: selected, context, locked, hidden, clipped), ``g``
  group and ``fr`` frame (each only when it is not the parent, else the parent stands for
  it; ``-1`` when there is none although the parent is one of that type), ``ob`` occludedBy,
  ``ab`` actionBounds ``[x, y, w, h]``, ``k`` keptFor; references as in ``parent``.
* ``"r"``: one array per relation, ``[type, from, to]`` with the type's position in
  ``RELATION_TYPES`` (``parent`` and ``bound`` are the native ones) and objects by position
  in ``"o"``, plus the terminal (0 start, 1 end) for ``bound`` and ``touches``, the gap for
  ``near``, the kind for ``aligned``.
* ``"changes"`` and ``"token"`` as in the JSON, when the observation has them.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Union

__all__ = ["compact", "expand", "COMPACT_GUIDE"]

_LABELS = ("visible", "partial", "occluded", "offscreen_near", "offscreen_far")
_LABEL_CODE = {name: i for i, name in enumerate(_LABELS)}
_REL = ("parent", "bound", "touches", "inside", "occludes", "overlaps", "near", "aligned")
_REL_CODE = {name: i for i, name in enumerate(_REL)}
_FLAGS = {"selected": "s", "context": "c", "locked": "l", "hidden": "h", "clipped": "x"}
_FLAG_NAMES = {v: k for k, v in _FLAGS.items()}
_TERMS = ("start", "end")

#: How to read the compact form, for an agent's system prompt (beside the observation GUIDE).
COMPACT_GUIDE = (
    "Compact form: v viewport [x,y,w,h]; o objects as [id,type,visibility,layer,parent,readingOrder,text,extra] "
    "(visibility 0 visible 1 partial 2 occluded 3 offscreen_near 4 offscreen_far; parent and every other "
    "reference: the object's position in o, or its id when it is not listed, -1 none; missing trailing "
    "values: none); extra keys n name, s style, r rotation, f flags (s selected c context l locked h hidden "
    "x clipped), g group and fr frame (when not the parent), ob occludedBy, ab actionBounds [x,y,w,h], "
    "k keptFor; r relations [type,from,to,extra] with type 0 parent 1 bound (native) 2 touches 3 inside "
    "4 occludes 5 overlaps 6 near 7 aligned, extra the terminal (0 start 1 end), the gap or the kind; "
    "om omitted [objects,relations]."
)

Ref = Union[int, str]


def compact(d: Mapping[str, Any]) -> Dict[str, Any]:
    """The compact form of an observation dict (what ``Observation.to_dict()`` returns).

    Examples
    --------
    >>> d = {"viewport": {"x": 0, "y": 0, "w": 10, "h": 10}, "omitted": {"objects": 0, "relations": 0},
    ...      "objects": [{"id": "f", "type": "frame", "layer": 0, "visibility": "visible"},
    ...                  {"id": "a", "type": "geo", "text": "hi", "layer": 1, "visibility": "occluded",
    ...                   "parent": "f", "frame": "f", "occludedBy": "f", "readingOrder": 0}],
    ...      "relations": [{"type": "parent", "from": "a", "to": "f", "native": True}]}
    >>> c = compact(d)
    >>> c["o"], c["r"]
    ([['f', 'frame', 0, 0], ['a', 'geo', 2, 1, 0, 0, 'hi', {'ob': 0}]], [[0, 1, 0]])
    >>> expand(c) == d
    True
    """
    objs = d["objects"]
    pos = {o["id"]: i for i, o in enumerate(objs)}
    types = {o["id"]: o["type"] for o in objs}

    def ref(i: Any) -> Ref:
        return -1 if i is None else pos.get(i, i)

    rows: List[List[Any]] = []
    for o in objs:
        extra: Dict[str, Any] = {}
        if "name" in o:
            extra["n"] = o["name"]
        if "style" in o:
            extra["s"] = o["style"]
        if "rotation" in o:
            extra["r"] = o["rotation"]
        if "flags" in o:
            extra["f"] = "".join(_FLAGS[f] for f in o["flags"])
        parent = o.get("parent")
        for key, short, kind in (("group", "g", "group"), ("frame", "fr", "frame")):
            v = o.get(key)
            implied = parent is not None and types.get(parent) == kind
            if v is None:
                if implied:
                    extra[short] = -1
            elif not (implied and v == parent):
                extra[short] = ref(v)
        if "occludedBy" in o:
            extra["ob"] = ref(o["occludedBy"])
        if "actionBounds" in o:
            b = o["actionBounds"]
            extra["ab"] = [b["x"], b["y"], b["w"], b["h"]]
        if "keptFor" in o:
            extra["k"] = o["keptFor"]
        row: List[Any] = [o["id"], o["type"], _LABEL_CODE[o["visibility"]], o["layer"], ref(parent),
                          o.get("readingOrder", -1), o.get("text", ""), extra]
        while len(row) > 4 and row[-1] in ({}, "", -1):
            row.pop()
        rows.append(row)
    rels: List[List[Any]] = []
    for r in d["relations"]:
        t = r["type"]
        item: List[Any] = [_REL_CODE[t], ref(r["from"]), ref(r["to"])]
        if t in ("bound", "touches"):
            item.append(_TERMS.index(r["terminal"]))
        elif t == "near":
            item.append(r["gap"])
        elif t == "aligned":
            item.append(r["kind"])
        rels.append(item)
    v = d["viewport"]
    out: Dict[str, Any] = {"v": [v["x"], v["y"], v["w"], v["h"]], "o": rows, "r": rels,
                           "om": [d["omitted"]["objects"], d["omitted"]["relations"]]}
    if "changes" in d:
        out["changes"] = d["changes"]
        out["token"] = d.get("token")
    return out


def expand(c: Mapping[str, Any]) -> Dict[str, Any]:
    """The observation dict a compact form stands for (the inverse of :func:`compact`)."""
    rows = c["o"]
    ids = [r[0] for r in rows]
    types = [r[1] for r in rows]

    def name(ref: Ref) -> str:
        return ids[ref] if isinstance(ref, int) else ref

    objects: List[Dict[str, Any]] = []
    for r in rows:
        r = list(r) + [-1, -1, "", {}][len(r) - 4:] if len(r) < 8 else list(r)
        oid, typ, vis, layer, parent, reading, text, extra = r[:8]
        o: Dict[str, Any] = {"id": oid, "type": typ}
        if text != "":
            o["text"] = text
        if "n" in extra:
            o["name"] = extra["n"]
        if "s" in extra:
            o["style"] = extra["s"]
        if "r" in extra:
            o["rotation"] = extra["r"]
        o["layer"] = layer
        if "f" in extra:
            o["flags"] = [_FLAG_NAMES[ch] for ch in extra["f"]]
        o["visibility"] = _LABELS[vis]
        if parent != -1:
            o["parent"] = name(parent)
        ptype = types[parent] if isinstance(parent, int) and parent >= 0 else None
        for key, short, kind in (("group", "g", "group"), ("frame", "fr", "frame")):
            if short in extra:
                if extra[short] != -1:
                    o[key] = name(extra[short])
            elif ptype == kind:
                o[key] = o["parent"]
        if "ob" in extra:
            o["occludedBy"] = name(extra["ob"])
        if reading != -1:
            o["readingOrder"] = reading
        if "ab" in extra:
            x, y, w, h = extra["ab"]
            o["actionBounds"] = {"x": x, "y": y, "w": w, "h": h}
        if "k" in extra:
            o["keptFor"] = extra["k"]
        objects.append(o)
    relations: List[Dict[str, Any]] = []
    for item in c["r"]:
        t = _REL[item[0]]
        rel: Dict[str, Any] = {"type": t, "from": name(item[1]), "to": name(item[2]), "native": t in ("parent", "bound")}
        if t in ("bound", "touches"):
            rel["terminal"] = _TERMS[item[3]]
        elif t == "near":
            rel["gap"] = item[3]
        elif t == "aligned":
            rel["kind"] = item[3]
        relations.append(rel)
    x, y, w, h = c["v"]
    out: Dict[str, Any] = {"viewport": {"x": x, "y": y, "w": w, "h": h}, "objects": objects, "relations": relations,
                           "omitted": {"objects": c["om"][0], "relations": c["om"][1]}}
    if "changes" in c:
        out["changes"] = c["changes"]
        out["token"] = c.get("token")
    return out
