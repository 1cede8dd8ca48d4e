"""sacreBLEU 2.6.0's paired significance tests (sacrebleu/significance.py): PairedTest and
Result, the resampling done by nmt's C++ port with numpy's generator reproduced to the bit.
One process: n_jobs is accepted and gives the same figures."""
import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from .metrics.base import Metric, Signature


class Result:
    def __init__(self, score: float, p_value: Optional[float] = None, mean: Optional[float] = None,
                 ci: Optional[float] = None):
        self.score = score
        self.p_value = p_value
        self.mean = mean
        self.ci = ci

    def __repr__(self):
        return ",".join([f"{k}={str(v)}" for k, v in self.__dict__.items()])


class PairedTest:
    _DEFAULT_SAMPLES = {"ar": 10000, "bs": 1000}

    def __init__(self, named_systems: List[Tuple[str, Sequence[str]]], metrics: Mapping[str, Metric],
                 references: Optional[Sequence[Sequence[str]]], test_type: str = "ar", n_samples: int = 0,
                 n_ar_confidence: int = -1, n_jobs: int = 1):
        assert test_type in ("ar", "bs"), f"Unknown test type {test_type!r}"
        if test_type == "ar" and n_ar_confidence >= 0:
            raise ValueError("PairedTest: n_ar_confidence (a bootstrap CI beside approximate randomization) "
                             "is not supported by nmt_score; leave it at -1")
        self.test_type = test_type
        seed = os.environ.get("SACREBLEU_SEED", "12345")
        self._seed = None if seed.lower() == "none" else int(seed)
        self.n_jobs = n_jobs
        self.references = references
        self.named_systems = named_systems
        self.n_ar_confidence = n_ar_confidence
        self.n_samples = n_samples if n_samples > 0 else self._DEFAULT_SAMPLES[self.test_type]
        self.n_systems = len(named_systems) - 1
        self.metrics = metrics

    def __call__(self) -> Tuple[Dict[str, Signature], Dict[str, List[Union[str, Result]]]]:
        systems = [list(hyps) for _, hyps in self.named_systems]
        for hyps in systems:
            next(iter(self.metrics.values()))._check_corpus_score_args(hyps, self.references)
        scores: Dict[str, List[Union[str, Result]]] = {"System": [name for name, _ in self.named_systems]}
        signatures: Dict[str, Signature] = {}
        for metric in self.metrics.values():
            streams = metric._streams(self.references)
            metric._note_num_refs(streams)
            rows = _core.paired_test(metric._core, streams, systems, self.test_type, self.n_samples)
            name = metric._signature_name()
            scores[name] = [Result(*row) for row in rows]
            sig = metric.get_signature()
            sig.update("seed", str(self._seed).lower())
            sig.update(self.test_type, self.n_samples)
            signatures[name] = sig
        return signatures, scores
