"""Who did it: the syntactic role a who-answer must fill (issue 24 item 4).

"Who commanded the French squadron?" asks for the one who *commands*: the subject of "commanded"
in a sentence that says it, the agent of a passive ("... was commanded by Admiral Grasse"), or a
name beside the agent noun ("the commander of the squadron, Admiral Grasse"). A name of the right
kind elsewhere in a sentence that holds the verb is not the answer: "... warned off by the
commander of the French squadron ... a just cause of complaint to the Government of France"
names France as the one complained to, and "In the war between those new Governments and Spain
we declared our neutrality" names Spain beside the declaring, not as the declarer.

The question is parsed by the support check's pipeline (:mod:`affidavit.support.parse`): the
role of its *who* (or of *which company*'s noun) on its verb is the role asked for — the doer
(``nsubj`` of an active verb, the object of passive "by") or the one done to (``nsubjpass``,
``dobj``: "Who was elected president?"). A claim that holds the verb acting on the question's
object (by lemma, or an agent noun of it: "commander", "founder", "inventor") names the answer
only inside that role's phrase; a claim without it (it may say it in other words) only inside
the phrase in that role of another verb on the same object (:data:`STRICT`). :func:`role_phrase`
is the phrase itself when no name fills the role ("assemblies and county governments").

"How many columns ...?" counts columns: :func:`counts_other` tells a number that counts
something else ("the following two lines").
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..support.parse import Parse, Token, parse, parse_many
from ..words import stem

__all__ = [
    "asked_role",
    "counted",
    "counts_other",
    "fillers",
    "fills",
    "modified_noun_end",
    "prepare",
    "role_phrase",
]

_LIGHT = frozenset({"be", "have", "do", "get", "become", "say", "call", "name", "know"})
"""Verbs that say too little about who did what to check a role by ("Who was president?")."""
_WH = frozenset({"who", "whom"})
_RELATIVE = frozenset({"who", "whom", "which", "that"})
_AGENT_NOUN = re.compile(r"(?:e?r|or|ant|ent|ist)s?$")
"""Endings that make a verb's agent noun ("commander", "inventor", "founder", "occupant")."""


def _verb_of(tokens: Parse, token: Token) -> tuple[str, str] | None:
    """The verb lemma and role (``doer``/``done``) ``token`` (a *who*, or *which company*'s
    noun) fills in the question."""
    head = tokens[token.head]
    if token.dep == "pobj" and head.lower == "by":
        verb = tokens[head.head]  # "By whom was the tower designed?"
        return (verb.lemma, "doer") if verb.pos == "VERB" else None
    if token.dep == "attr" and head.lemma == "be":
        for t in tokens:  # "Who was the tower designed by?": an acl with a bare agent
            if (
                t.head != t.i
                and tokens[t.head].head == head.i
                and t.dep == "acl"
                and any(c.head == t.i and c.dep == "agent" for c in tokens)
            ):
                return t.lemma, "doer"
        return None
    if head.pos != "VERB" or head.lemma in _LIGHT:
        return None
    if token.dep == "nsubj":
        return head.lemma, "doer"
    if token.dep in ("nsubjpass", "dobj"):
        return head.lemma, "done"
    return None


@lru_cache(maxsize=1024)
def asked_role(question: str) -> tuple[str, str] | None:
    """``(verb lemma, "doer" | "done")`` a who / which-organisation question asks about, or
    ``None`` when its verb says too little ("be", "have") or the parse finds no such role."""
    tokens = parse(question)
    for token in tokens:
        if token.lower in _WH:
            return _verb_of(tokens, token)
        if token.lower in ("which", "what") and token.dep == "det":
            return _verb_of(tokens, tokens[token.head])
    return None


def _edges(tokens: Parse, root: int) -> tuple[int, int]:
    """The character range of ``root``'s subtree."""
    inside = {root}
    grew = True
    while grew:
        grew = False
        for t in tokens:
            if t.i not in inside and t.head in inside and t.head != t.i:
                inside.add(t.i)
                grew = True
    chosen = [tokens[i] for i in inside]
    return min(t.idx for t in chosen), max(t.idx + len(t.text) for t in chosen)


def _filler(tokens: Parse, token: Token) -> tuple[int, int]:
    """The phrase ``token`` heads; a relative pronoun ("who", "which") stands for the noun its
    clause describes ("Admiral Grasse, who commanded ..."), up to that noun."""
    if token.lower in _RELATIVE:
        verb = tokens[token.head]
        if verb.dep in ("relcl", "acl"):
            noun = tokens[verb.head]
            start = _edges(tokens, noun.i)[0]
            if noun.dep == "appos" and noun.head != noun.i:  # "William Penn, the man who ..."
                start = min(start, _edges(tokens, noun.head)[0])
            return start, noun.idx + len(noun.text)
    return _edges(tokens, token.i)


def _children(tokens: Parse, token: Token, *deps: str) -> list[Token]:
    return [t for t in tokens if t.head == token.i and t.i != token.i and t.dep in deps]


def _passive(tokens: Parse, verb: Token) -> bool:
    """``verb`` is passive: "was built", "built by ...", "... and opened by ...", "the bridge
    built in 1917"."""
    if _children(tokens, verb, "auxpass", "nsubjpass", "agent"):
        return True
    if verb.tag != "VBN" or _children(tokens, verb, "nsubj", "aux"):
        return False
    head = tokens[verb.head]
    return verb.dep in ("acl", "relcl") or (
        verb.dep == "conj" and head.i != verb.i and _passive(tokens, head)
    )


def _verb_fillers(tokens: Parse, verb: Token, role: str) -> list[tuple[int, int]]:
    """The phrases that fill ``role`` of ``verb``."""
    return [_filler(tokens, t) for t in _role_heads(tokens, verb, role)]


def _role_heads(tokens: Parse, verb: Token, role: str) -> list[Token]:
    """The head tokens of the phrases that fill ``role`` of ``verb``."""
    passive = _passive(tokens, verb)
    found: list[Token] = []
    if role == "doer":
        if passive:
            for agent in _children(tokens, verb, "agent"):
                found += _children(tokens, agent, "pobj")
        else:
            found += _children(tokens, verb, "nsubj")
            if not found and verb.dep in ("conj", "advcl", "xcomp") and verb.head != verb.i:
                # "X founded and led ...", "X provided a new argument, estimating ..."
                found += _children(tokens, tokens[verb.head], "nsubj")
            if not found and verb.dep in ("relcl", "acl") and verb.tag == "VBG":
                found.append(tokens[verb.head])  # "a squadron commanding ..."
    else:
        found += _children(tokens, verb, "nsubjpass" if passive else "dobj")
        if passive and not found and verb.dep in ("acl", "relcl"):
            found.append(tokens[verb.head])  # "the man elected president"
        if passive and not found and verb.dep == "conj":  # "X was elected and crowned"
            found += _children(tokens, tokens[verb.head], "nsubjpass")
    return found


def _noun_fillers(tokens: Parse, noun: Token) -> list[tuple[int, int]]:
    """Who an agent noun names: its apposition ("the commander, Admiral Grasse"), the name it
    titles ("Commander Porter"), or the subject it is said of ("Grasse was the commander")."""
    found = [t for t in tokens if t.dep == "appos" and t.head == noun.i]
    if noun.dep == "appos":
        found.append(tokens[noun.head])
    if noun.dep == "compound":
        found.append(tokens[noun.head])
    if noun.dep == "attr":
        found += _children(tokens, tokens[noun.head], "nsubj")
    return [_filler(tokens, t) for t in found]


def _same_verb(lemma: str, token: Token) -> bool:
    return token.pos == "VERB" and (token.lemma == lemma or stem(token.lemma) == stem(lemma))


def _agent_noun(lemma: str, token: Token) -> bool:
    if token.pos not in ("NOUN", "PROPN") or len(lemma) < 3:
        return False
    root = lemma[:-1] if lemma.endswith("e") else lemma
    return token.lower.startswith(root) and bool(_AGENT_NOUN.fullmatch(token.lower[len(root) :]))


def fillers(question: str, text: str) -> list[tuple[int, int]] | None:
    """The character ranges of ``text`` that fill the role ``question`` asks about (every
    occurrence of its verb on the question's object), or ``None`` when there is nothing to
    judge: the question asks no verb's role, or ``text`` holds no form of the verb acting on
    that object. An empty list: ``text`` holds it and names no one in that role."""
    role = asked_role(question)
    if role is None:
        return None
    lemma, kind = role
    if len(unicodedata.normalize("NFKC", text)) != len(text):
        return None  # the parse's offsets would not be this text's
    wanted = _asked_objects(question)
    tokens = parse(text)
    ranges: list[tuple[int, int]] = []
    held = False
    for token in tokens:
        if _same_verb(lemma, token) and _same_object(wanted, tokens, token):
            # (not "the Governments who have declared their independence": they declared no war,
            # and the sentence is judged like one without the verb)
            held = True
            ranges += _verb_fillers(tokens, token, kind)
        elif kind == "doer" and _agent_noun(lemma, token):
            held = True
            ranges += _noun_fillers(tokens, token)
    return ranges if held else None


STRICT = 1
"""A claim that holds no form of the question's verb: 0 any name may answer, 1 a name in the
same role of any verb, 2 none."""


ANY_VERB_OBJECT = True
"""Whether another verb's doer must act on what the question's verb does."""


def _any_verb_fillers(text: str, kind: str, wanted: frozenset[str]) -> list[tuple[int, int]]:
    """The phrases of ``text`` in ``kind``'s role of any of its verbs that acts on ``wanted``
    (the question's object, if it has one): "Admiral de Grasse" in "Admiral de Grasse led the
    squadron" for "Who commanded the squadron?", not "the Napoleonic struggles" that "did
    threaten interests of the United States" for "Who declared war on the United States?"."""
    tokens = parse(text)
    ranges: list[tuple[int, int]] = []
    for token in tokens:
        if token.pos == "VERB" and (not ANY_VERB_OBJECT or _same_object(wanted, tokens, token)):
            ranges += _verb_fillers(tokens, token, kind)
    return ranges


def fills(question: str, text: str, start: int, end: int) -> bool:
    """The span ``text[start:end]`` may answer ``question``: it lies in the phrase that fills
    the role asked about, or ``text`` gives nothing to judge by (:func:`fillers`)."""
    ranges = fillers(question, text)
    if ranges is None:
        role = asked_role(question)
        if role is None or STRICT == 0 or len(unicodedata.normalize("NFKC", text)) != len(text):
            return True
        if STRICT == 2:
            return False
        ranges = _any_verb_fillers(text, role[1], _asked_objects(question))
    return any(start < right and end > left for left, right in ranges)


def prepare(question: str, texts: list[str]) -> None:
    """Parse, in one batch, the ``texts`` a role check of ``question`` will read."""
    if asked_role(question) is None and not counted(question):
        return
    parse_many(list(dict.fromkeys(texts)))


_QUANTITIES = frozenset(
    {"million", "billion", "thousand", "hundred", "dozen", "percent", "per", "cent", "%", "times"}
)
"""Words a number may modify that are part of the number, not what it counts."""


@lru_cache(maxsize=1024)
def counted(question: str) -> str:
    """The stem of what a "how many N ...?" question counts ("column" for "How many columns can
    a table have?"), or ``""``."""
    tokens = parse(question)
    for token in tokens:
        if token.lower == "many" and token.dep == "amod":
            noun = tokens[token.head]
            if noun.pos in ("NOUN", "PROPN") and noun.i != token.i:
                return stem(noun.lemma)
    return ""


def counts_other(question: str, text: str, start: int) -> bool:
    """The number at ``text[start:]`` counts something other than what ``question`` asks how
    many of: "two" in "The following two lines are equivalent" for "How many columns ...?" (a
    bare number, "is 2000", or one that counts the asked noun, "64 tables", is not)."""
    noun = counted(question)
    if not noun or len(unicodedata.normalize("NFKC", text)) != len(text):
        return False
    tokens = parse(text)
    at = next((t for t in tokens if t.idx <= start < t.idx + max(1, len(t.text))), None)
    if at is None or at.pos != "NUM":
        return False
    while at.dep in ("nummod", "compound", "quantmod") and at.head != at.i:
        head = tokens[at.head]
        if head.pos == "NUM" or head.lower in _QUANTITIES:
            at = head
            continue
        if head.pos != "NOUN":
            return False
        return stem(head.lemma) != noun and not stem(head.lemma).startswith(noun)
    return False


_PRONOUNS = frozenset(
    {"i", "we", "you", "he", "she", "it", "they", "this", "that", "these", "those", "one", "who"}
)
MAX_PHRASE = 8
"""Words a phrase that fills the role may have to be a short answer."""


_CONTENT = frozenset({"NOUN", "PROPN", "ADJ", "NUM", "VERB"})


def _object_stems(tokens: Parse, verb: Token) -> frozenset[str]:
    """The stems of the content words of what ``verb`` acts on: its object's phrase, or a
    passive's subject ("the Government of France"), or the clause it says ("it was declared
    ... that it would grant no commissions"); for "the squadron that X commanded", the noun the
    clause describes. Empty when it has none, or only a pronoun."""
    objects = _children(tokens, verb, "nsubjpass" if _passive(tokens, verb) else "dobj")
    if not objects or objects[0].lower in ("it", "this"):
        objects = _children(tokens, verb, "ccomp") or objects  # "it was declared ... that ..."
    if not objects or objects[0].lower in _WH:
        return frozenset()
    root = objects[0]
    if root.lower in _RELATIVE and verb.dep == "relcl":
        root = tokens[verb.head]
    if root.lower in _RELATIVE:
        return frozenset()
    left, right = _edges(tokens, root.i)
    if root.i != objects[0].i:  # the described noun, not the clause around it
        right = root.idx + len(root.text)
    return frozenset(stem(t.lower) for t in tokens if left <= t.idx < right and t.pos in _CONTENT)


def _asked_objects(question: str) -> frozenset[str]:
    """The stems of the object of a who-question's verb: the noun and the words that make it
    up ("war" in "Who declared war on the United States?", "land" in "Who claimed the land on
    the eastern side ...?"), not the phrases attached to it."""
    role = asked_role(question)
    if role is None or role[1] != "doer":
        return frozenset()
    tokens = parse(question)
    verbs = [t for t in tokens if t.pos == "VERB" and t.lemma == role[0]]
    objects = _children(tokens, verbs[0], "dobj") if verbs else []
    if not objects or objects[0].lower in _WH:
        return frozenset()
    noun = objects[0]
    parts = [noun, *_children(tokens, noun, "compound", "amod")]
    return frozenset(stem(t.lower) for t in parts if t.pos in _CONTENT)


def _same_object(wanted: frozenset[str], tokens: Parse, verb: Token) -> bool:
    """``verb`` acts on what the question's verb does, or on nothing said: "declared their
    independence" is no declaring of war; "claimed ownership of land" claims land."""
    if not wanted:
        return True
    have = _object_stems(tokens, verb)
    return not have or bool(have & wanted)


def role_phrase(question: str, text: str) -> str | None:
    """The noun phrase of ``text`` that fills the role ``question`` asks about, when no name
    does: "the 13 colonies" for "Who started drilling their militia?" against "... the 13
    colonies had organized themselves ... and began ... drilling their militia". Only where the
    verb takes the question's object too ("declared their independence" answers no "Who
    declared war?"), never a pronoun, at most :data:`MAX_PHRASE` words; ``None`` otherwise."""
    role = asked_role(question)
    if role is None or len(unicodedata.normalize("NFKC", text)) != len(text):
        return None
    lemma, kind = role
    wanted = _asked_objects(question)
    tokens = parse(text)
    for verb in tokens:
        if not _same_verb(lemma, verb):
            continue
        if not _same_object(wanted, tokens, verb):
            continue
        for left, right in _verb_fillers(tokens, verb, kind):
            inside = [t for t in tokens if left <= t.idx < right]
            heads = [t for t in inside if t.head not in {u.i for u in inside} or t.head == t.i]
            if not heads or heads[0].pos not in ("NOUN", "PROPN", "NUM"):
                continue
            head = heads[0]
            if head.lower in _PRONOUNS:
                continue
            # the phrase up to its head noun and what it is coordinated with, without the
            # clauses and prepositions after it
            ends = [head.idx + len(head.text)]
            for t in inside:
                if t.dep == "conj" and t.head == head.i:
                    ends.append(t.idx + len(t.text))
            phrase = text[left : max(ends)].strip(" ,;:")
            if phrase and len(phrase.split()) <= MAX_PHRASE:
                return phrase
    return None


def modified_noun_end(text: str, start: int, end: int) -> int | None:
    """When the name at ``text[start:end]`` is an adjective of the noun right after it ("British"
    in "British merchants offered ..."), the end of that noun: the people named are the noun's
    ("British merchants"), not the adjective's; ``None`` otherwise."""
    if len(unicodedata.normalize("NFKC", text)) != len(text):
        return None
    tokens = parse(text)
    last = next((t for t in tokens if t.idx < end <= t.idx + len(t.text)), None)
    if last is None or last.pos != "ADJ" or last.dep != "amod" or last.head != last.i + 1:
        return None
    noun = tokens[last.head]
    if noun.pos != "NOUN":
        return None
    return noun.idx + len(noun.text)
