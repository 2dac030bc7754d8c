""":data:`METRICS` (exported as ``xaimetrics.METRICS``) and its entries: one block per metric, by family.

To add a metric, export its callable from the family's ``__init__`` and add a block in its family's section::

    METRICS.register(
        "sensitivity_max",
        MetricInfo(
            family="fidelity", direction="lower", range=(0, inf), data=("text", "tensor", "image"),
            category="robustness", callables=("xaimetrics.fidelity.sensitivity_max",), reference="captum",
        ),
        description="largest change of the explanation under small input perturbations",
    )

then paste ``xaimetrics metrics`` (the regenerated table) between the markers of ``docs/metrics.md``.
``tests/test_metric_registry.py`` fails while an exported metric has no entry or the docs table is stale.
"""

from __future__ import annotations

from math import inf

from xaimetrics._metric_registry import Category, DataType, Direction, MetricInfo, new_registry

__all__ = ["METRICS"]

#: every metric of the library, by name; its entries follow
METRICS = new_registry()

ATTRIBUTIONS: tuple[DataType, ...] = ("text", "tensor", "image")

# -- fidelity: attributions of a model's inputs -------------------------------------------------------------------
METRICS.register(
    "deletion",
    MetricInfo(
        family="fidelity",
        direction="lower",
        range=(0, 1),
        data=ATTRIBUTIONS,
        category="faithfulness",
        callables=("xaimetrics.fidelity.Deletion",),
        reference="xplique",
    ),
    description="area under the target score as the most important features are removed (probabilities)",
    builtin=True,
)
METRICS.register(
    "insertion",
    MetricInfo(
        family="fidelity",
        direction="higher",
        range=(0, 1),
        data=ATTRIBUTIONS,
        category="faithfulness",
        callables=("xaimetrics.fidelity.Insertion",),
        reference="xplique",
    ),
    description="area under the target score as the most important features are put back (probabilities)",
    builtin=True,
)
METRICS.register(
    "aopc_comprehensiveness",
    MetricInfo(
        family="fidelity",
        direction="higher",
        range=(-1, 1),
        data=ATTRIBUTIONS,
        category="faithfulness",
        callables=("xaimetrics.fidelity.AOPCComprehensiveness",),
        reference="ferret (DeYoung et al. 2020)",
    ),
    description="mean score drop when the top t% features are removed",
    builtin=True,
)
METRICS.register(
    "aopc_sufficiency",
    MetricInfo(
        family="fidelity",
        direction="lower",
        range=(-1, 1),
        data=ATTRIBUTIONS,
        category="faithfulness",
        callables=("xaimetrics.fidelity.AOPCSufficiency",),
        reference="ferret (DeYoung et al. 2020)",
    ),
    description="mean score drop when only the top t% features are kept",
    builtin=True,
)
METRICS.register(
    "mufidelity",
    MetricInfo(
        family="fidelity",
        direction="higher",
        range=(-1, 1),
        data=ATTRIBUTIONS,
        category="faithfulness",
        callables=("xaimetrics.fidelity.MuFidelity",),
        reference="xplique",
    ),
    description="correlation between the attribution of random subsets and the output drop they cause",
    builtin=True,
)

# -- conceptmetrics: concept-based models (PyC) -------------------------------------------------------------------
METRICS.register(
    "concept_alignment_score",
    MetricInfo(
        family="conceptmetrics",
        direction="higher",
        range=(0, 1),
        data=("concepts",),
        category="accuracy",
        callables=(
            "xaimetrics.conceptmetrics.ConceptAlignmentScore",
            "xaimetrics.conceptmetrics.concept_alignment_score",
        ),
        reference="pytorch-concepts",
    ),
    description="mean over binary concepts of each concept's accuracy",
    builtin=True,
)
METRICS.register(
    "cace",
    MetricInfo(
        family="conceptmetrics",
        direction="neither",
        range=(-1, 1),
        data=("concepts",),
        category="causality",
        callables=(
            "xaimetrics.conceptmetrics.cace_score",
            "xaimetrics.conceptmetrics.CausalConceptEffect",
            "xaimetrics.conceptmetrics.concept_effect",
        ),
        reference="pytorch-concepts",
    ),
    description="causal concept effect E[f | do(C=1)] − E[f | do(C=0)] per output (range for probabilities)",
    builtin=True,
)
METRICS.register(
    "residual_concept_causal_effect",
    MetricInfo(
        family="conceptmetrics",
        direction="neither",
        range=(-inf, inf),
        data=("concepts",),
        category="causality",
        callables=("xaimetrics.conceptmetrics.residual_concept_causal_effect",),
        reference="pytorch-concepts",
    ),
    description="share of a concept's causal effect left after fixing a mediator (1: none mediated)",
    builtin=True,
)
METRICS.register(
    "intervention_score",
    MetricInfo(
        family="conceptmetrics",
        direction="higher",
        range=(0, 1),
        data=("concepts",),
        category="causality",
        callables=(
            "xaimetrics.conceptmetrics.intervention_score",
            "xaimetrics.conceptmetrics.intervention_curve",
        ),
        reference="pytorch-concepts",
    ),
    description="task score after replacing groups of predicted concepts by the truth, mean over groups (ROC AUC)",
    builtin=True,
)
METRICS.register(
    "tcav_score",
    MetricInfo(
        family="conceptmetrics",
        direction="neither",
        range=(0, 1),
        data=("activations", "concepts"),
        category="causality",
        callables=("xaimetrics.conceptmetrics.tcav_score",),
        reference="pytorch-concepts",
    ),
    description="fraction of inputs whose target output rises along a concept vector (0.5: no influence)",
    builtin=True,
)
METRICS.register(
    "number_of_effective_concepts",
    MetricInfo(
        family="conceptmetrics",
        direction="lower",
        range=(0, inf),
        data=("concepts",),
        category="complexity",
        callables=("xaimetrics.conceptmetrics.number_of_effective_concepts",),
        reference="pytorch-concepts",
    ),
    description="NEC: mean number of concepts with a non-zero weight per class",
    builtin=True,
)
METRICS.register(
    "number_of_contributing_concepts",
    MetricInfo(
        family="conceptmetrics",
        direction="lower",
        range=(0, inf),
        data=("concepts",),
        category="complexity",
        callables=("xaimetrics.conceptmetrics.number_of_contributing_concepts",),
        reference="pytorch-concepts",
    ),
    description="NCC: concepts needed to cover a fraction of each decision's absolute contribution",
    builtin=True,
)
METRICS.register(
    "completeness_score",
    MetricInfo(
        family="conceptmetrics",
        direction="higher",
        range=(0, inf),
        data=("concepts",),
        category="completeness",
        callables=("xaimetrics.conceptmetrics.completeness_score",),
        reference="pytorch-concepts",
    ),
    description="score of the concept model over the black box's (ROC AUC or F1 ratio; 1: as good)",
    builtin=True,
)

# -- concepts: a concept space's complexity and faithfulness (ConSim App. D) -------------------------------------
_CONSIM_D = "ConSim paper (App. D)"
_CONCEPTS: tuple[tuple[str, str, Direction, tuple[float, float], Category, str], ...] = (
    ("concept_l0", "concept_l0", "lower", (0, inf), "complexity", "mean number of active concepts per sample"),
    ("concept_activation_ratio", "concept_activation_ratio", "lower", (0, 1), "complexity", "share of active concepts"),
    ("n_important_concepts", "n_important_concepts", "lower", (0, inf), "complexity", "number of concepts shown in prompts"),
    ("important_concept_ratio", "important_concept_ratio", "lower", (0, 1), "complexity", "share of concepts shown in prompts"),
    ("decoder_cosine_similarity", "decoder_cosine_similarity", "lower", (-1, 1), "complexity", "mean pairwise cosine of the decoder atoms"),
    ("decoder_covariance", "decoder_covariance", "lower", (-inf, inf), "complexity", "mean covariance between decoder atoms"),
    ("latent_l2", "latent_l2", "lower", (0, inf), "faithfulness", "reconstruction error of the activations"),
    ("logits_l2", "logits_l2", "lower", (0, inf), "faithfulness", "reconstruction error of the logits"),
    ("logits_kl", "logits_kl", "lower", (0, inf), "faithfulness", "KL(softmax f ‖ softmax f_c)"),
    ("completeness", "completeness", "higher", (-inf, inf), "completeness", "chance-corrected accuracy of f_c relative to f (1: as good)"),
)  # fmt: skip
for _name, _callable, _direction, _range, _category, _description in _CONCEPTS:
    METRICS.register(
        _name,
        MetricInfo(
            family="concepts",
            direction=_direction,
            range=_range,
            data=("activations", "concepts"),
            category=_category,
            callables=(f"xaimetrics.concepts.{_callable}",),
            reference=_CONSIM_D,
        ),
        description=_description,
        builtin=True,
    )

# -- representation: interpretability of representations (Atlas design) ------------------------------------------
METRICS.register(
    "topic_coherence",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("words", "text"),
        category="coherence",
        callables=("xaimetrics.representation.topic_coherence",),
        reference="gensim",
    ),
    description="mean pairwise NPMI of each topic's words over a reference corpus",
    builtin=True,
)
METRICS.register(
    "npmi",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("words", "text"),
        category="coherence",
        callables=("xaimetrics.representation.npmi_matrix",),
        reference="gensim",
    ),
    description="normalised pointwise mutual information of every pair of words",
    builtin=True,
)
METRICS.register(
    "dim_coherence",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("activations", "words"),
        category="coherence",
        callables=("xaimetrics.representation.dim_coherence",),
        reference="gensim",
    ),
    description="NPMI coherence of the top-k words of each dimension",
    builtin=True,
)
METRICS.register(
    "clustering_stability",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("labelings",),
        category="stability",
        callables=("xaimetrics.representation.clustering_stability",),
        reference="scikit-learn",
    ),
    description="mean pairwise ARI and NMI of clusterings of the same samples",
    builtin=True,
)
METRICS.register(
    "representation_stability",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("activations",),
        category="stability",
        callables=("xaimetrics.representation.representation_stability",),
        reference="scikit-learn",
    ),
    description="clustering stability of k-means on each run's representation",
    builtin=True,
)
METRICS.register(
    "dictionary_stability",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(0, 1),
        data=("concepts",),
        category="stability",
        callables=("xaimetrics.representation.dictionary_stability",),
        reference="interpreto",
    ),
    description="Hungarian-matched cosine of concept atoms across runs, beside a random baseline",
    builtin=True,
)
METRICS.register(
    "dimension_purity",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(0, 1),
        data=("activations",),
        category="purity",
        callables=("xaimetrics.representation.dimension_purity",),
    ),
    description="share of a dimension's correlation with labelled factors taken by its main factor",
    builtin=True,
)
METRICS.register(
    "counterfactual_consistency",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("activations", "text"),
        category="causality",
        callables=(
            "xaimetrics.representation.counterfactual_consistency",
            "xaimetrics.representation.concept_counterfactual_consistency",
        ),
    ),
    description="cosine between the measured and the expected change when one dimension is shifted",
    builtin=True,
)
METRICS.register(
    "krippendorff_alpha",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(-1, 1),
        data=("ratings",),
        category="agreement",
        callables=("xaimetrics.representation.krippendorff_alpha",),
        reference="krippendorff",
    ),
    description="inter-rater reliability of human ratings",
    builtin=True,
)
METRICS.register(
    "composite_score",
    MetricInfo(
        family="representation",
        direction="higher",
        range=(0, 1),
        data=("activations",),
        category="composite",
        callables=("xaimetrics.representation.composite_score",),
    ),
    description="weighted combination of coherence, consistency, stability, purity and α",
    builtin=True,
)

# -- detection: per-concept simulatability ------------------------------------------------------------------------
METRICS.register(
    "detection_auroc",
    MetricInfo(
        family="detection",
        direction="higher",
        range=(0, 1),
        data=("concepts", "text", "answers"),
        category="simulatability",
        callables=(
            "xaimetrics.detection.auroc",
            "xaimetrics.detection.score",
            "xaimetrics.detection.Detection",
            "xaimetrics.detection.detect_concept",
        ),
        reference="delphi",
    ),
    description="AUROC of a reader's P(Yes) separating a concept's activating texts from the others",
    builtin=True,
)
METRICS.register(
    "detection_balanced_accuracy",
    MetricInfo(
        family="detection",
        direction="higher",
        range=(0, 1),
        data=("concepts", "text", "answers"),
        category="simulatability",
        callables=("xaimetrics.detection.balanced_accuracy",),
        reference="delphi",
    ),
    description="balanced accuracy of a reader's Yes/No answers (text-only readers)",
    builtin=True,
)
METRICS.register(
    "fuzzing_score",
    MetricInfo(
        family="detection",
        direction="higher",
        range=(0, 1),
        data=("concepts", "text", "answers"),
        category="simulatability",
        callables=("xaimetrics.detection.fuzz_concept",),
        reference="delphi",
    ),
    description="detection score when the concept's words are marked in its activating texts",
    builtin=True,
)

# -- consim: concept-based simulatability ------------------------------------------------------------------------
_CONSIM = (
    "xaimetrics.consim.ConSim",
    "xaimetrics.consim.score_response",
    "xaimetrics.consim.evaluate_prompts",
)
_SCORES: tuple[tuple[str, Direction, tuple[float, float], str], ...] = (
    ("consim_accuracy", "higher", (0, 1), "accuracy of the simulator's answers against f's predictions (eq. 5)"),
    ("consim_expected_accuracy", "higher", (0, 1), "mean probability the simulator gives f's prediction"),
    ("consim_log_loss", "lower", (0, inf), "mean −log probability the simulator gives f's prediction"),
    ("consim_brier", "lower", (0, 2), "Brier score of the simulator's class probabilities against f's predictions"),
)  # fmt: skip
for _name, _direction, _range, _description in _SCORES:
    METRICS.register(
        _name,
        MetricInfo(
            family="consim",
            direction=_direction,
            range=_range,
            data=("text", "concepts", "answers"),
            category="simulatability",
            callables=_CONSIM,
            reference="interpreto",
        ),
        description=_description,
        builtin=True,
    )
