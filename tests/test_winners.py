# SPDX-License-Identifier: Apache-2.0
"""Winners, group-by and golden statistics."""
from __future__ import annotations

from analysis_support import golden, golden_csv, synth_analysis, synth_db  # noqa: F401
from fixtures import synth
from tlsbench.export.csv import CsvExporter


def _by_title(a):
    return {w.question.title: w for w in a.results.winners}


def test_synthetic_winners_follow_the_cost_model(synth_analysis):  # noqa: F811
    a = synth_analysis
    names = {cid: c.suite_name for cid, c in a.ds.configs.items()}
    w = _by_title(a)
    chacha = next(s.name for s in synth.SUITES if "CHACHA" in s.name)
    psk = next(s.name for s in synth.SUITES if s.key_exchange == "PSK")
    assert names[w["Record write"].winner.config_id] == chacha          # lowest record_us
    assert names[w["Record read"].winner.config_id] == chacha
    assert names[w["Handshake as initiator (client processing)"].winner.config_id] == psk
    assert names[w["Handshake as responder (server processing)"].winner.config_id] == psk
    assert all(x.significant for x in w.values())
    for x in w.values():
        meds = [p.median for p in x.places]
        assert meds == sorted(meds) and len(x.places) == len(synth.SUITES)
        assert all(p.vs_winner.ratio >= 1 for p in x.places[1:])


def test_equal_candidates_are_not_significant_and_say_how_many_reps(synth_analysis):  # noqa: F811
    # The two ECDSA suites share the handshake cost model: their gap is noise.
    w = _by_title(synth_analysis)["Handshake as initiator (client processing)"]
    ecdsa = [p for p in w.places if "ECDSA" in synth_analysis.ds.configs[p.config_id].suite_name]
    assert len(ecdsa) == 2
    from tlsbench.analysis.questions.winners import rank

    r = rank(synth_analysis.samples.answers, w.question, synth_analysis.results.config_labels, seed=1,
             among={p.config_id for p in ecdsa})
    assert not r.significant and r.warnings
    assert "not significant" in r.warnings[0]


def test_group_by_pools_configs(synth_analysis):  # noqa: F811
    tables = {(t.question.title, t.by[0]): t for t in synth_analysis.results.groups}
    kx = tables[("Handshake as initiator (client processing)", "key_exchange")]
    keys = {r.key[0] for r in kx.rows}
    assert keys == {"ECDHE", "PSK"}
    ecdhe = [r for r in kx.rows if r.key[0] == "ECDHE"]
    assert sum(len(r.configs) for r in ecdhe) == 3


def test_golden_statistics_and_winners(golden):  # noqa: F811
    text = CsvExporter().export(golden)
    assert text == golden_csv("statistics.csv", text)
    lines = ["question,place,config,median_ns,ratio_to_winner,verdict"]
    for w in golden.results.winners:
        for i, p in enumerate(w.places):
            lines.append(f"{w.question.title},{i},{golden.ds.configs[p.config_id].suite_name},{p.median:.1f},"
                         f"{'' if p.vs_winner is None else f'{p.vs_winner.ratio:.4f}'},"
                         f"{'' if p.vs_winner is None else p.vs_winner.verdict}")
    text = "\n".join(lines) + "\n"
    assert text == golden_csv("winners.csv", text)


def test_answers_hold_only_the_values_a_report_can_show():
    # Configurations arrive in any order; every median stays, the values of only the lowest
    # `keep` of all and of each group: the winners are those of every value held.
    import numpy as np

    from tlsbench.analysis.questions.answers import QUESTIONS, Answers
    from tlsbench.analysis.questions.winners import RUNNERS_UP, rank

    rng = np.random.default_rng(3)
    q, one_library = QUESTIONS[2], frozenset(range(0, 30, 3))
    shown, every = Answers(keep=RUNNERS_UP + 1, among=[None, one_library]), Answers(keep=None)
    for cid in rng.permutation(30).tolist():
        values = rng.normal(100 + cid % 7, 5, 60)
        answered = {q: (values, np.arange(60) % 3)}
        shown.add(cid, answered)
        every.add(cid, answered)
    assert shown.medians == every.medians and len(every.values[q]) == 30
    assert set(shown.values[q]) == set(every.ranked(q)[:4]) | set(every.ranked(q, one_library)[:4])
    labels = {cid: f"config {cid}" for cid in range(30)}
    for among in (None, one_library):
        assert rank(shown, q, labels, seed=1, among=among) == rank(every, q, labels, seed=1, among=among)
