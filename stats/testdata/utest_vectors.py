# Reference p-values for stats/utest_test.go, from an implementation
# independent of benchseal's: scipy.stats.mannwhitneyu (Debian
# python3-scipy 1.10.1) for the exact distribution without ties and the
# normal approximation (tie and continuity correction), and a brute-force
# enumeration of every split of the pooled mid-ranks for the exact
# distribution with ties (scipy 1.10's "exact" method ignores ties).
# Run: /usr/bin/python3 stats/testdata/utest_vectors.py
import itertools
from scipy.stats import mannwhitneyu, rankdata

def brute(x, y):
    # p = min(1, 2·min(Pr[U1 <= obs], Pr[U1 >= obs])), scipy's exact
    # convention; both tails counted (with ties U1 is not symmetric).
    pooled = list(x) + list(y)
    r = rankdata(pooled)
    n1 = len(x)
    obs = sum(r[:n1]) - n1 * (n1 + 1) / 2
    lo = hi = total = 0
    for c in itertools.combinations(range(len(pooled)), n1):
        s = sum(r[i] for i in c) - n1 * (n1 + 1) / 2
        total += 1
        lo += s <= obs + 1e-9
        hi += s >= obs - 1e-9
    return obs, min(1.0, 2 * min(lo, hi) / total)

cases = {
    "exact": [
        ([1, 2, 3], [4, 5, 6]),
        ([1, 2, 3, 4], [5, 6, 7, 8]),
        ([10.5, 11.2, 9.8, 10.9, 11.5], [12.1, 11.9, 12.8, 13.0, 11.7]),
        ([3, 1, 4, 1.5, 9, 2.6], [5, 3.5, 8, 9.7, 9.3]),
        ([1, 3, 5, 7], [2, 4, 6, 8]),
    ],
    "asymptotic": [
        (list(range(1, 61)), [x + 10.5 for x in range(1, 61)]),
        ([i % 7 for i in range(55)], [i % 5 + 1 for i in range(60)]),
    ],
    "ties": [
        ([1, 2, 2, 3], [2, 3, 4, 4]),
        ([5, 5, 5], [6, 6, 7]),
        ([1, 1, 2, 2, 3], [3, 3, 4, 4, 5, 5]),
        ([10, 10], [5, 5, 5]),
        ([10, 10, 10], [5, 5, 5, 5]),
        ([1, 1, 1, 1, 3, 1], [2, 3]),
        ([4, 3, 3, 4, 3, 4], [2, 2]),
        ([1, 1, 2, 2, 2, 3], [1, 3, 3]),
        ([7, 7, 7, 7, 8], [8, 9, 9]),
    ],
}
for kind, cs in cases.items():
    for x, y in cs:
        if kind == "ties":
            u, p = brute(x, y)
            print(kind, x, y, "U1=%r p=%r" % (u, p))
        else:
            r = mannwhitneyu(x, y, alternative="two-sided", method=kind, use_continuity=True)
            print(kind, x, y, "U1=%r p=%r" % (float(r.statistic), float(r.pvalue)))

# Hodges–Lehmann shift and its exact (Moses) interval, by enumeration of
# the U distribution of n1 + n2 distinct values (stats/shift.go).
def shift(x, y, conf):
    import statistics
    d = sorted(a - b for a in x for b in y)
    n1, n2 = len(x), len(y)
    counts = {}
    for c in itertools.combinations(range(n1 + n2), n1):
        u = sum(c) + n1 - n1 * (n1 + 1) // 2  # ranks are index + 1
        counts[u] = counts.get(u, 0) + 1
    total = sum(counts.values())
    cum, cc = 0, -1
    for u in range(n1 * n2 + 1):
        cum += counts.get(u, 0)
        if cum / total > (1 - conf) / 2:
            break
        cc = u
    tail = sum(counts.get(u, 0) for u in range(cc + 1))
    return statistics.median(d), d[cc], d[len(d) - cc - 1], 1 - 2 * tail / total

for x, y in [([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), ([10.2, 9.9, 10.8, 10.4, 10.1, 10.6], [9.1, 9.6, 9.3, 9.8, 9.0, 9.4, 9.7])]:
    print("shift", x, y, "est=%r lo=%r hi=%r conf=%r" % shift(x, y, 0.95))
