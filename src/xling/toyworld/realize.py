"""Realization: a meaning becomes a sentence of one language, with gold annotation on every word.

Each token carries its UPOS, features, head, universal relation, BIO tag and an alignment key (the
meaning node and role it realizes; tokens of two languages with the same key are translations).
Phrases are built as contiguous blocks and then ordered by the profile's knobs, so every tree is
projective with a single root.
"""

from __future__ import annotations

import itertools
import random

from .concepts import World
from .lexicon import PRONOUNS, Lexicon
from .meanings import Arg, Clause, Sentence
from .phonology import capitalize

_CASE_FEATURE = {"subj": "Nom", "obj": "Acc", "obl": "Loc"}


class Token:
    """One gold word. `head` is another Token (None for the root) until `resolve` numbers them."""

    __slots__ = ("deprel", "feats", "form", "head", "key", "lemma", "ner", "space_after", "upos")

    def __init__(
        self,
        form: str,
        lemma: str,
        upos: str,
        deprel: str,
        key: str,
        feats: str = "_",
        ner: str = "O",
    ) -> None:
        self.form, self.lemma, self.upos, self.deprel, self.key = form, lemma, upos, deprel, key
        self.feats, self.ner = feats, ner
        self.head: Token | None = None
        self.space_after = True


def attach(tokens: list[Token], head: Token, deprel: str | None = None) -> None:
    for tok in tokens:
        tok.head = head
        if deprel is not None:
            tok.deprel = deprel


class Grammar:
    """Realizes meanings in one language (its lexicon and the structural knobs of its profile)."""

    def __init__(self, lexicon: Lexicon, world: World) -> None:
        p = lexicon.profile
        self.lx, self.world, self.p = lexicon, world, p
        self.fw = lexicon.function
        self.articles = p["articles"]
        self.agree = set(p["article_agreement"])
        self.marks_case = any(p["case_suffixes"].values()) or "case" in self.agree
        self.separator = p["separator"]
        self.caps = p["capitalization"]
        self.punct = p["punctuation"]

    def _word(self, key: str, upos: str, deprel: str, align: str, feats: str = "_") -> Token:
        """A function word token (its form comes from the lexicon's function words)."""
        form = self.fw[key]
        return Token(form, form.lower(), upos, deprel, align, feats)

    # --- noun phrases ----------------------------------------------------------------------
    def _det(self, arg: Arg, case: str, path: str) -> Token | None:
        if self.articles == "none" or (self.articles == "definite" and not arg.definite):
            return None
        if not arg.definite and arg.plural and "number" not in self.agree:
            return None  # no plural indefinite article ("dogs", not "a dogs")
        key = "det.def" if arg.definite else "det.indef"
        key += (".pl" if arg.plural else ".sg") if "number" in self.agree else ""
        key += f".{case}" if "case" in self.agree else ""
        feats = f"Definite={'Def' if arg.definite else 'Ind'}|PronType=Art"
        return self._word(key, "DET", "det", path + "/det", feats)

    def noun_phrase(self, arg: Arg, case: str, path: str) -> tuple[list[Token], Token]:
        """Tokens of an argument in linear order, and its head token."""
        lx, world = self.lx, self.world
        if arg.kind == "pronoun":
            form = self.fw[PRONOUNS[arg.ref]]
            tok = Token(form, form.lower(), "PRON", "_", path + "/head", "PronType=Prs")
            return [tok], tok
        if arg.kind == "entity":
            entity = world.entities[arg.ref]
            tokens = []
            for i, part in enumerate(entity.parts):
                stem = lx.stems[part]
                form = stem.upper() if world.lexemes[part].acronym else capitalize(stem)
                tag = ("B-" if i == 0 else "I-") + entity.type
                tokens.append(Token(form, form, "PROPN", "flat", f"{path}/name{i}", "_", tag))
            attach(tokens[1:], tokens[0])
            return tokens, tokens[0]
        noun = arg.ref
        form = lx.noun(noun, arg.plural, case)
        lemma = lx.citation(noun)
        if self.caps == "nouns":
            form = capitalize(form)
        feats = f"Case={_CASE_FEATURE[case]}|" if self.marks_case else ""
        feats += "Number=Plur" if arg.plural else "Number=Sing"
        head = Token(form, lemma, "NOUN", "_", path + "/head", feats)
        before: list[Token] = []
        det = self._det(arg, case, path)
        if det is not None:
            before.append(det)
        if arg.count >= 0:
            before.append(
                Token(
                    lx.stems[arg.count],
                    lx.stems[arg.count],
                    "NUM",
                    "nummod",
                    path + "/num",
                    "NumType=Card",
                )
            )
            if self.p["classifiers"]:
                clf = self.fw["clf." + world.category_of(noun)]
                before.append(Token(clf, clf, "NOUN", "clf", path + "/clf"))
        adjectives: list[Token] = []
        for k, adj in enumerate(arg.adjectives):
            form = lx.adjective(adj, arg.plural)
            adjectives.append(Token(form, lx.stems[adj], "ADJ", "amod", f"{path}/adj{k}"))
            if self.p["adjective_particle"]:
                part = Token(
                    self.fw["adj_part"], self.fw["adj_part"], "PART", "mark", f"{path}/adjpart{k}"
                )
                part.head = adjectives[-1]
                adjectives.append(part)
        for tok in before + adjectives:
            if tok.head is None:
                tok.head = head
        if self.p["adjective_position"] == "before":
            return [*before, *adjectives, head], head
        return [*before, head, *adjectives], head

    def adpositional(self, key: str, tokens: list[Token], head: Token, path: str) -> list[Token]:
        """Add an adposition (`in`, `from`, `by`) before or after a phrase."""
        adp = self._word(key, "ADP", "case", path + "/case")
        adp.head = head
        return [adp, *tokens] if self.p["adposition"] == "preposition" else [*tokens, adp]

    def oblique(self, arg: Arg, adposition: str, path: str) -> tuple[list[Token], Token]:
        tokens, head = self.noun_phrase(arg, "obl", path)
        return self.adpositional(adposition, tokens, head, path), head

    def time(self, lexeme: int, path: str) -> tuple[list[Token], Token]:
        stem = self.lx.stems[lexeme]
        if self.world.lexemes[lexeme].kind == "adv":
            tok = Token(stem, stem, "ADV", "advmod", path + "/head")
            return [tok], tok
        tok = Token(stem, stem, "NUM", "obl", path + "/head", "NumType=Card")
        return self.adpositional("in", [tok], tok, path), tok

    # --- clauses ---------------------------------------------------------------------------
    def _negated_group(self, core: list[Token], aux: Token | None, path: str) -> list[Token]:
        """The verb (or copula) with its negation words, in the profile's position."""
        neg = self._word("neg", "PART", "advmod", path + "/neg", "Polarity=Neg")
        position = self.p["negation"]
        if position == "both":
            neg2 = self._word(
                "neg2",
                "PART",
                "advmod",
                path + "/neg",
                "Polarity=Neg",
            )
            if aux is not None:
                return [neg, aux, neg2, *core]
            return [neg, *core, neg2]
        if position == "after":
            return [*([aux] if aux else []), *core, neg]
        if aux is None and self.p["negation_aux"]:
            aux = self._word("neg_aux", "AUX", "aux", path + "/neg")
        return [*([aux] if aux else []), neg, *core]

    def clause(
        self, c: Clause, path: str, subordinate: bool, rng: random.Random
    ) -> tuple[list[Token], Token]:
        """Tokens of a clause in order, and its head (the verb, or the copular predicate)."""
        return (
            self._copular(c, path, subordinate)
            if c.verb < 0
            else self._event(c, path, subordinate, rng)
        )

    def _event(
        self, c: Clause, path: str, subordinate: bool, rng: random.Random
    ) -> tuple[list[Token], Token]:
        lx, p, world = self.lx, self.p, self.world
        verb = world.verbs[c.verb]
        passive = (
            c.patient is not None and p["passive_rate"] > 0 and rng.random() < p["passive_rate"]
        )
        stem = lx.stems[verb.lexeme]
        head = Token(
            lx.verb(verb.lexeme, passive),
            stem,
            "VERB",
            "_",
            path + "/verb",
            "Voice=Pass" if passive else "_",
        )
        aux = None
        if passive:
            aux = self._word("pass_aux", "AUX", "aux", path + "/aux")
        group = (
            self._negated_group([head], aux, path) if c.negated else [*([aux] if aux else []), head]
        )
        subj_arg = c.patient if passive else c.agent
        subject, subj_head = self.noun_phrase(
            subj_arg, "subj", path + (".patient" if passive else ".agent")
        )
        subj_head.deprel = "nsubj"
        obj: list[Token] = []
        if c.patient is not None and not passive:
            obj, obj_head = self.noun_phrase(c.patient, "obj", path + ".patient")
            obj_head.deprel = "obj"
            obj_head.head = head
        obliques: list[list[Token]] = []
        if passive:
            by, by_head = self.oblique(c.agent, "by", path + ".agent")
            by_head.deprel, by_head.head = "obl", head
            obliques.append(by)
        if c.location is not None:
            loc, loc_head = self.oblique(c.location, "in", path + ".location")
            loc_head.deprel, loc_head.head = "obl", head
            obliques.append(loc)
        fronted: list[Token] = []
        if c.time >= 0:
            time, time_head = self.time(c.time, path + ".time")
            time_head.head = head
            if rng.random() < p["modifier_fronting"]:
                fronted = time
            else:
                obliques.append(time)
        complement: list[Token] = []
        if c.complement is not None:
            inner, inner_head = self.clause(c.complement, path + ".comp", True, rng)
            that = self._word("that", "SCONJ", "mark", path + "/that")
            that.head, inner_head.head, inner_head.deprel = inner_head, head, "ccomp"
            complement = [that, *inner]
        for tok in group:
            if tok is not head:
                tok.head = head
        subj_head.head = head
        if p["oblique_position"] == "before_verb":
            obliques.reverse()  # time before place, as in Chinese
        x = [t for block in obliques for t in block]
        order = p["word_order"]
        if order == "V2" and subordinate:
            order = "SOV"  # verb-final subordinate clauses, as in German
        if order == "SVO":
            if not subordinate and obj and rng.random() < p["scramble"]:
                subject, obj = obj, subject  # OVS, readable through case suffixes
            if p["oblique_position"] == "before_verb":
                tokens = [*fronted, *subject, *x, *group, *obj, *complement]
            else:
                tokens = [*fronted, *subject, *group, *obj, *x, *complement]
        elif order == "SOV":
            tokens = [*fronted, *subject, *x, *obj, *group, *complement]
        elif fronted:  # V2 with a fronted modifier: the verb comes second, the subject after it
            tokens = [*fronted, *group, *subject, *obj, *x, *complement]
        else:
            tokens = [*subject, *group, *obj, *x, *complement]
        return tokens, head

    def _copular(self, c: Clause, path: str, subordinate: bool) -> tuple[list[Token], Token]:
        lx, p = self.lx, self.p
        subject, subj_head = self.noun_phrase(c.agent, "subj", path + ".agent")
        subj_head.deprel = "nsubj"
        extra: list[Token] = []
        if c.predicate is not None:
            pred, head = self.noun_phrase(c.predicate, "subj", path + ".pred")
        elif c.pred_adj >= 0:
            plural = c.agent.kind == "noun" and c.agent.plural
            head = Token(
                lx.adjective(c.pred_adj, plural),
                lx.stems[c.pred_adj],
                "ADJ",
                "_",
                path + ".pred/head",
            )
            pred = [head]
        else:  # "X is in Y": the location is the predicate
            pred, head = self.oblique(c.location, "in", path + ".location")
        if c.origin is not None:
            extra, origin_head = self.oblique(c.origin, "from", path + ".origin")
            origin_head.head, origin_head.deprel = head, "nmod" if c.predicate else "obl"
        cop = None
        if p["copula"]:
            cop = self._word("cop", "AUX", "cop", path + "/cop")
        group = self._negated_group([], cop, path) if c.negated else ([cop] if cop else [])
        for tok in group:
            tok.head = head
        subj_head.head = head
        if p["word_order"] == "SOV" or (p["word_order"] == "V2" and subordinate):
            return [*subject, *extra, *pred, *group], head
        return [*subject, *group, *pred, *extra], head

    # --- sentences -------------------------------------------------------------------------
    def _comma(self, path: str) -> Token:
        return Token(self.punct["comma"], self.punct["comma"], "PUNCT", "punct", path + "/comma")

    def realize(self, s: Sentence, rng: random.Random) -> list[Token]:
        """The gold words of a sentence, heads set, spacing and capitalization applied."""
        p = self.p
        tokens, root = self.clause(s.main, "c0", False, rng)
        root.head, root.deprel = None, "root"
        if s.second is not None:
            subordinate = s.link == "because"
            second, head2 = self.clause(s.second, "c1", subordinate, rng)
            head2.head = root
            link_key = "because" if subordinate else "and"
            link = self._word(
                link_key,
                "SCONJ" if subordinate else "CCONJ",
                "mark" if subordinate else "cc",
                "s/link",
            )
            link.head = head2
            comma_knob = "comma_before_subordinate" if subordinate else "comma_before_coordination"
            comma = [self._comma("s")] if p[comma_knob] else []
            attach(comma, head2)
            if subordinate:
                head2.deprel = "advcl"
                if p["subordinate_position"] == "before":
                    tokens = [link, *second, *comma, *tokens]
                else:
                    tokens = [*tokens, *comma, link, *second]
            else:
                head2.deprel = "conj"
                tokens = [*tokens, *comma, link, *second]
        mark = self.punct["exclamation" if s.exclamation else "period"]
        final = Token(mark, mark, "PUNCT", "punct", "s/final")
        final.head = root
        tokens.append(final)
        if self.caps != "none":
            tokens[0].form = capitalize(tokens[0].form)
        spaced = self.separator != ""
        for tok, nxt in itertools.pairwise(tokens):
            tok.space_after = spaced and nxt.upos != "PUNCT"
        tokens[-1].space_after = False
        return tokens


def text_of(tokens: list[Token], separator: str = " ") -> str:
    """The raw sentence: words joined by the separator, none before attached punctuation."""
    return "".join(t.form + (separator if t.space_after else "") for t in tokens)
