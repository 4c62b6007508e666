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

import numpy as np


def _mj():
    import mujoco

    return mujoco


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


def _type_names():
    mj = _mj()
    return {int(v): k for k, v in mj.mjtConstraint.__members__.items()}


def _groups(types, ids):
    """``(start, end)`` of each run of consecutive rows sharing ``(type, id)``."""
    out, start = [], 0
    for i in range(1, len(types) + 1):
        if i == len(types) or (types[i], ids[i]) != (types[start], ids[start]):
            out.append((start, i))
            start = i
    return out


def _targets(model, data, kind, start, end):
    """The rows' target velocities (see the module documentation)."""
    h = float(model.opt.timestep)
    t = np.zeros(end - start)
    if kind == "friction_loss":
        return t
    first = start
    last = end if kind == "equality" else start + 1
    for i in range(first, last):
        phi = float(data.efc_pos[i] - data.efc_margin[i])
        if kind != "equality" and phi > 0.0:
            t[i - start] = -phi / h
        else:
            b = float(data.efc_KBIP[i][1])
            t[i - start] = h * (float(data.efc_aref[i]) + b * float(data.efc_vel[i]))
    return t


def _contact_mu(data, cid, dim):
    friction = np.asarray(data.contact[cid].friction, dtype=float)
    take = {1: 0, 3: 2, 4: 3, 6: 5}
    if dim not in take:
        raise ValueError(f"MuJoCo state: contact {cid} has condim {dim}, not 1, 3, 4 or 6")
    return [float(x) for x in friction[: take[dim]]]


def blocks(model, data) -> list:
    """The constraint blocks of MuJoCo's rows at ``data`` (after ``mj_forward``), in row order:
    one dict per constraint with ``kind`` (``equality``, ``limit``, ``friction_loss``,
    ``contact``), ``rows`` (its first and one-past-last row of ``efc_*``), ``mujoco_type`` (the
    ``mjtConstraint`` name), ``id`` (``efc_id``: the equality, dof, joint, tendon or contact),
    ``target`` (one velocity per row), ``phi`` (``efc_pos - efc_margin`` of its rows), and
    ``mu`` (a contact's coefficient per frictional row) or ``f_max`` (a friction loss's bound,
    ``h efc_frictionloss``). Refuses pyramidal contacts and an unknown row type, naming the row."""
    mj = _mj()
    nefc = int(data.nefc)
    types = [int(x) for x in data.efc_type[:nefc]]
    ids = [int(x) for x in data.efc_id[:nefc]]
    kinds, names = _kinds(), _type_names()
    h = float(model.opt.timestep)
    out = []
    for start, end in _groups(types, ids):
        code = types[start]
        if code == int(mj.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL):
            raise ValueError(
                f"MuJoCo state: rows {start}-{end - 1} are a pyramidal-cone contact; contactlab "
                "takes elliptic cones: set model.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC "
                '(or <option cone="elliptic"/>) and call mj_forward again'
            )
        if code not in kinds:
            raise ValueError(f"MuJoCo state: row {start} has constraint type {code}, unknown")
        block = {
            "kind": kinds[code],
            "rows": (start, end),
            "mujoco_type": names.get(code, str(code)),
            "id": ids[start],
            "phi": [float(data.efc_pos[i] - data.efc_margin[i]) for i in range(start, end)],
        }
        if block["kind"] == "contact":
            contact = data.contact[ids[start]]
            dim = int(contact.dim)
            if int(contact.efc_address) != start or dim != end - start:
                raise ValueError(
                    f"MuJoCo state: contact {ids[start]} has condim {dim} at row "
                    f"{int(contact.efc_address)}, but its rows are {start}-{end - 1}"
                )
            block["mu"] = _contact_mu(data, ids[start], dim)
        if block["kind"] == "friction_loss":
            block["f_max"] = h * float(data.efc_frictionloss[start])
        block["target"] = list(_targets(model, data, block["kind"], start, end))
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
