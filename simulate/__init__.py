"""Simulated users: the vectorised lockstep and simpy agent engines, estimators with standard
errors, and the three-way agreement check (closed form, exact, simulation)."""

from simulate.check import simulate, simulate_ranking
from simulate.estimators import Moments

__all__ = ["simulate", "simulate_ranking", "Moments"]
