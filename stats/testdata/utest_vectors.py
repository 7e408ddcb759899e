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
    pooled = list(x) + list(y)
    r = rankdata(pooled)
    n1 = len(x)
    obs = sum(r[:n1]) - n1 * (n1 + 1) / 2
    u = min(obs, n1 * len(y) - obs)
    tail = total = 0
    for c in itertools.combinations(range(len(pooled)), n1):
        s = sum(r[i] for i in c) - n1 * (n1 + 1) / 2
        total += 1
        if min(s, n1 * len(y) - s) <= u + 1e-9 and s <= u + 1e-9:
            tail += 1
    return obs, min(1.0, 2 * tail / total)

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
