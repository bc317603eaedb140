"""The simulation settings and their one validator, shared by the command line (``--seed``,
``--users``, ...), experiment configs (``[experiment]``) and :func:`rpdi.simulate`, so that the
same mistake gets the same message wherever it is made.

>>> from rpdi.simulate.settings import check_settings
>>> check_settings({"seed": -1}, prefix="--")
Traceback (most recent call last):
...
rpdi.metrics.errors.InputError: --seed: Input should be greater than or equal to 0
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rpdi.choices import CONVENTIONS, ENGINES, TOPICS
from rpdi.metrics.errors import InputError


class Settings(BaseModel):
    """How a simulation runs; every field is validated the same way everywhere."""

    model_config = ConfigDict(extra="forbid", strict=False)

    seed: int = Field(0, ge=0, description="root of every random stream (numpy SeedSequence: >= 0)")
    users: int = Field(10_000, ge=0, description="simulated users per (run, topic, measure)")
    engine: Literal[ENGINES] = "vector"
    target_stderr: float | None = Field(None, gt=0, allow_inf_nan=False,
                                        description="simulate until the standard error is this small")
    max_users: int = Field(10_000_000, ge=1, description="cap on users per ranking with target_stderr")
    convention: Literal[CONVENTIONS] = "unknown"
    topics: Literal[TOPICS] = "qrels"
    force: bool = Field(False, description="simulate even beyond the work limit (see simulate.work)")


def validation_message(exc: ValidationError) -> tuple[str, str]:
    """(key path, message) of a pydantic validation error's first problem."""
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]) or "(top level)"
    return where, "unknown key" if err["type"] == "extra_forbidden" else err["msg"]


def check_settings(values: dict, prefix: str = "") -> Settings:
    """Validate simulation settings; InputError naming the key (``prefix`` + key: ``--max-users``
    on the command line, where underscores become hyphens) and what is wrong."""
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        where, msg = validation_message(exc)
        key = where.replace("_", "-") if prefix == "--" else where
        raise InputError(f"{prefix}{key}: {msg}") from None
