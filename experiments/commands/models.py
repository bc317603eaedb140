"""``rpdi models``: the browsing models, each with its user and reference."""

from __future__ import annotations

from rpdi.metrics import MEASURES
from rpdi.usermodels import MODELS, SESSION_MODELS, model_for
from rpdi.usermodels.conversation import Conversation


def _entry(name: str, aggregation: str) -> str:
    spec = MEASURES[name]
    return f"{spec.name_with_defaults()}  [{aggregation}]\n    user: {spec.user_model}\n    ref:  {spec.citation}"


def run(args) -> str:
    lines = [_entry(name, cls.aggregation) for name, cls in MODELS.items()]
    lines.append("users with intents, reading diversity qrels (`--intents`):")
    lines += [_entry(name, model_for(name + ("@10" if spec.cutoff == "required" else "")).aggregation)
              for name, spec in MEASURES.items() if spec.intents and spec.model]
    lines.append("X-IA  [X's]\n    user: draws an intent i with probability P(i|q), then is X's user on intent i's "
                 "grades (any model X, one's own too: path.py:Class-IA(...))\n    ref:  Agrawal, Gollapudi, Halverson "
                 "& Ieong 2009")
    lines.append("users of sessions, reading each session's turns end to end (`--sessions FILE`, or CAsT ids "
                 "SESSION_TURN):")
    lines += [_entry(name, cls.aggregation) for name, cls in SESSION_MODELS.items()]
    lines.append(f"rpdi.usermodels.conversation:Conversation(p={Conversation.parameters['p']})@k  "
                 f"[{Conversation.aggregation}]\n    user: {Conversation.rule}\n    ref:  {Conversation.citation}")
    closed_only = [name for name, spec in MEASURES.items() if not spec.model]
    lines.append("no browsing model (closed form only, `rpdi eval`): " + ", ".join(closed_only))
    return "\n".join(lines) + "\n"
