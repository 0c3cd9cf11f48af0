"""Mean, standard deviation and Student-t 95% confidence intervals (no scipy here), on the values and on their logs
(:func:`log_interval`: the interval of a positive quantity that never goes below zero)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30; beyond 30 the normal 1.96 is used.
T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile_95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom (1.96 beyond df 30).

    Raises:
        ValueError: ``df`` < 1.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    return T975[df - 1] if df <= len(T975) else 1.96


@dataclass(frozen=True)
class Summary:
    """Statistics of repeated measurements, in the unit of the measurements.

    Attributes:
        n: number of values.
        mean: arithmetic mean.
        std: sample standard deviation (n - 1); 0 for one value.
        ci95: half-width of the 95% confidence interval of the mean (t × std / √n); NaN for one value.
        low / high: ``mean ∓ ci95``.
    """

    n: int
    mean: float
    std: float
    ci95: float

    @property
    def low(self) -> float:
        """Lower end of the 95% confidence interval."""
        return self.mean - self.ci95

    @property
    def high(self) -> float:
        """Upper end of the 95% confidence interval."""
        return self.mean + self.ci95


def summarize(values: Sequence[float]) -> Summary:
    """Mean, sample standard deviation and 95% CI half-width of ``values``.

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = statistics.fmean(values)
    if n == 1:
        return Summary(n=1, mean=mean, std=0.0, ci95=math.nan)
    std = statistics.stdev(values)
    return Summary(n=n, mean=mean, std=std, ci95=t_quantile_95(n - 1) * std / math.sqrt(n))


@dataclass(frozen=True)
class LogInterval:
    """A 95% interval for a positive quantity, taken on the log scale: the Student-t interval of the mean of the
    log values, back-transformed. It is an interval for the geometric mean, never below zero, and asymmetric
    (wider above than below), as times and throughputs are.

    Attributes:
        gmean: geometric mean (exp of the mean of the logs), in the unit of the values.
        low / high: exp(mean of logs ∓ t(0.975, n - 1) × std of logs / √n); NaN for one value.
    """

    gmean: float
    low: float
    high: float


def log_interval(values: Sequence[float]) -> LogInterval | None:
    """The 95% t-interval of ``values`` on the log scale (:class:`LogInterval`), or ``None`` when a value is not
    positive (a log has no meaning there: the caller falls back to the arithmetic interval, clipped at 0).

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError("no values to summarize")
    if any(v <= 0 or math.isnan(v) for v in values):
        return None
    logs = summarize([math.log(v) for v in values])
    if logs.n == 1:
        return LogInterval(gmean=math.exp(logs.mean), low=math.nan, high=math.nan)
    return LogInterval(gmean=math.exp(logs.mean), low=math.exp(logs.mean - logs.ci95),
                       high=math.exp(logs.mean + logs.ci95))
