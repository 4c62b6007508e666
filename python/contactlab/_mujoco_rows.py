"""MuJoCo's constraint rows grouped into the project's constraint blocks (``core/src/constraint.rs``).

MuJoCo lists its rows (``efc_*``) as equality, friction loss, limit and contact rows. Rows of
one constraint share ``(efc_type, efc_id)`` and are consecutive; each group becomes one block:

- ``equality`` (``mjCNSTR_EQUALITY``): a connect 3 rows, a weld 6, a joint or tendon equality 1;
- ``friction_loss`` (``mjCNSTR_FRICTION_DOF``, ``mjCNSTR_FRICTION_TENDON``): 1 row per dof or
  tendon, its bound ``f_max = h efc_frictionloss`` in impulse units;
- ``limit`` (``mjCNSTR_LIMIT_JOINT``, ``mjCNSTR_LIMIT_TENDON``): 1 row per active side, the side
  in ``J``'s sign;
- ``contact`` (``mjCNSTR_CONTACT_ELLIPTIC``, ``mjCNSTR_CONTACT_FRICTIONLESS``): ``contact.dim``
  rows from ``contact.efc_address``, normal first, with one coefficient per frictional row from
  ``contact.friction`` (sliding twice, torsional, rolling twice: ``condim`` 3 takes the first two,
  4 the first three, 6 all five; ``condim`` 1 none).

Pyramidal contacts are refused: their rows are the pyramid's edges, a different friction law.

**Targets.** Each row's target velocity ``t`` (the problem's offset carries ``-t``) is the position
part of MuJoCo's reference acceleration times ``h``: MuJoCo's ``efc_aref = -b efc_vel - k imp phi``
(``phi = efc_pos - efc_margin``; ``k``, ``b``, ``imp`` in ``efc_KBIP``) without its damping term,
``t = h (efc_aref + b efc_vel)``, for equality rows and for the limit and contact normal rows in
penetration. For limits and contacts this is ``-h k imp phi`` to rounding (tested); for a mocap
weld MuJoCo's reference differs from that formula by about 1e-4 relative (Fetch), and the target
follows MuJoCo's. A limit or contact normal row with ``phi > 0`` (inside its margin, not touching)
is speculative, ``t = -phi / h`` (it may close the gap in one step, no more). MuJoCo's damping term
is not part of a rigid target. Frictional, torsional, rolling and friction-loss rows have
``t = 0``.
"""

from __future__ import annotations

import functools

import numpy as np


def _mj():
    import mujoco

    return mujoco


@functools.lru_cache(maxsize=None)
def _kinds():
    mj = _mj()
    c = mj.mjtConstraint
    return {
        int(c.mjCNSTR_EQUALITY): "equality",
        int(c.mjCNSTR_FRICTION_DOF): "friction_loss",
        int(c.mjCNSTR_FRICTION_TENDON): "friction_loss",
        int(c.mjCNSTR_LIMIT_JOINT): "limit",
        int(c.mjCNSTR_LIMIT_TENDON): "limit",
        int(c.mjCNSTR_CONTACT_FRICTIONLESS): "contact",
        int(c.mjCNSTR_CONTACT_ELLIPTIC): "contact",
    }


@functools.lru_cache(maxsize=None)
def _type_names():
    mj = _mj()
    return {int(v): k for k, v in mj.mjtConstraint.__members__.items()}


def _groups(types, ids):
    """``(start, end)`` of each run of consecutive rows sharing ``(type, id)``."""
    if types.size == 0:
        return []
    cut = np.flatnonzero((types[1:] != types[:-1]) | (ids[1:] != ids[:-1])) + 1
    edges = np.concatenate([[0], cut, [types.size]])
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _targets(model, data, kind_of_row, first_of_block):
    """Every row's target velocity (see the module documentation), from MuJoCo's arrays at
    once: ``kind_of_row`` names each row's kind, ``first_of_block`` marks each block's first
    row (a limit's or contact's normal row)."""
    nefc = int(data.nefc)
    h = float(model.opt.timestep)
    phi = np.asarray(data.efc_pos[:nefc]) - np.asarray(data.efc_margin[:nefc])
    b = np.asarray(data.efc_KBIP[:nefc, 1])
    t = h * (np.asarray(data.efc_aref[:nefc]) + b * np.asarray(data.efc_vel[:nefc]))
    equality = kind_of_row == "equality"
    normal = first_of_block & ((kind_of_row == "limit") | (kind_of_row == "contact"))
    t = np.where(normal & (phi > 0.0), -phi / h, t)
    return np.where(equality | normal, t, 0.0), phi


#: Frictional coefficients a contact of each ``condim`` takes from MuJoCo's five.
_FRICTIONAL = {1: 0, 3: 2, 4: 3, 6: 5}


def _refuse(code, start, end, kinds):
    """Refuses a pyramidal contact (with how to switch) and an unknown row type."""
    mj = _mj()
    if code == int(mj.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL):
        raise ValueError(
            f"MuJoCo state: rows {start}-{end - 1} are a pyramidal-cone contact; contactlab "
            "takes elliptic cones: set model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC "
            '(or <option cone="elliptic"/>) and call mj_forward again'
        )
    if code not in kinds:
        raise ValueError(f"MuJoCo state: row {start} has constraint type {code}, unknown")


def _contact_table(data):
    """Every contact's ``condim``, first row and five coefficients, read from MuJoCo once."""
    n = int(data.ncon)
    contact = data.contact
    return (
        np.asarray(contact.dim[:n]).tolist(),
        np.asarray(contact.efc_address[:n]).tolist(),
        np.asarray(contact.friction[:n], dtype=float),
    )


def _contact_fields(table, block, start, end):
    """A contact block's coefficients, checked against MuJoCo's contact record."""
    dims, addresses, friction = table
    cid = block["id"]
    dim = int(dims[cid])
    if dim not in _FRICTIONAL:
        raise ValueError(f"MuJoCo state: contact {cid} has condim {dim}, not 1, 3, 4 or 6")
    if int(addresses[cid]) != start or dim != end - start:
        raise ValueError(
            f"MuJoCo state: contact {cid} has condim {dim} at row "
            f"{int(addresses[cid])}, but its rows are {start}-{end - 1}"
        )
    block["mu"] = friction[cid, : _FRICTIONAL[dim]].tolist()


def blocks(model, data) -> list:
    """The constraint blocks of MuJoCo's rows at ``data`` (after ``mj_forward``), in row order:
    one dict per constraint with ``kind`` (``equality``, ``limit``, ``friction_loss``,
    ``contact``), ``rows`` (its first and one-past-last row of ``efc_*``), ``mujoco_type`` (the
    ``mjtConstraint`` name), ``id`` (``efc_id``: the equality, dof, joint, tendon or contact),
    ``target`` (one velocity per row), ``phi`` (``efc_pos - efc_margin`` of its rows), and
    ``mu`` (a contact's coefficient per frictional row) or ``f_max`` (a friction loss's bound,
    ``h efc_frictionloss``). Refuses pyramidal contacts and an unknown row type, naming the row."""
    nefc = int(data.nefc)
    types = np.asarray(data.efc_type[:nefc], dtype=np.int64)
    ids = np.asarray(data.efc_id[:nefc], dtype=np.int64)
    kinds, names = _kinds(), _type_names()
    h = float(model.opt.timestep)
    groups = _groups(types, ids)
    kind_of_row = np.empty(nefc, dtype=object)
    first = np.zeros(nefc, dtype=bool)
    for start, end in groups:
        _refuse(int(types[start]), start, end, kinds)
        kind_of_row[start:end] = kinds[int(types[start])]
        first[start] = True
    target, phi = _targets(model, data, kind_of_row, first)
    table = _contact_table(data)
    out = []
    for start, end in groups:
        code = int(types[start])
        block = {
            "kind": kinds[code],
            "rows": (start, end),
            "mujoco_type": names.get(code, str(code)),
            "id": int(ids[start]),
            "phi": phi[start:end].tolist(),
        }
        if block["kind"] == "contact":
            _contact_fields(table, block, start, end)
        if block["kind"] == "friction_loss":
            block["f_max"] = h * float(data.efc_frictionloss[start])
        block["target"] = target[start:end].tolist()
        out.append(block)
    return out


def kinds(model, data) -> dict:
    """How many constraints of each kind the state has (``{"contact": 8, "limit": 2, ...}``),
    contacts also by ``condim`` (``"contact (condim 4)"``)."""
    count: dict = {}
    for b in blocks(model, data):
        count[b["kind"]] = count.get(b["kind"], 0) + 1
        if b["kind"] == "contact":
            key = f"contact (condim {1 + len(b['mu'])})"
            count[key] = count.get(key, 0) + 1
    return count
