"""Random streams keyed by what they are for, not by the order in which they are asked for.

``stream(seed, *key)`` is the SeedSequence of (seed, key...): (seed, run, topic, measure) for a
ranking's simulated users, (seed, measure, "flips") for a randomization test's sign flips. The
same key gives the same stream in any process and order; keys that differ in any part give
independent streams. Example: ``np.random.default_rng(stream(0, "AP", "flips"))`` draws the same
numbers in every session.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stream(seed: int, *key: str) -> np.random.SeedSequence:
    """The SeedSequence of (seed, key...): the seed and the 128-bit BLAKE2b digest of the key's
    parts joined by NUL, as four 32-bit words."""
    digest = hashlib.blake2b("\x00".join(key).encode(), digest_size=16).digest()
    return np.random.SeedSequence([seed, *np.frombuffer(digest, dtype=np.uint32).tolist()])
