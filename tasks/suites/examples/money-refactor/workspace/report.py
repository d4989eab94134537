#!/usr/bin/env python3
"""Print a sales report from a CSV of sales (region,product,cents).

    python3 report.py sales.csv

Refunds are sales with a negative amount.
"""

import csv
import sys


def load(path):
    """Return the sales as (region, product, cents) tuples."""
    with open(path, newline="", encoding="utf-8") as f:
        return [(r["region"], r["product"], int(r["cents"])) for r in csv.DictReader(f)]


def render(sales):
    """Return the report as a string."""
    out = []
    regions = {}
    for region, _, cents in sales:
        regions[region] = regions.get(region, 0) + cents
    out.append("Sales by region")
    for region in sorted(regions):
        cents = regions[region]
        sign = "-" if cents < 0 else ""
        dollars, rest = divmod(abs(cents), 100)
        out.append(f"  {region:<10} {sign}${dollars:,}.{rest:02d}")

    total = sum(regions.values())
    sign = "-" if total < 0 else ""
    dollars, rest = divmod(abs(total), 100)
    out.append(f"Total: {sign}${dollars:,}.{rest:02d}")

    refunds = [c for _, _, c in sales if c < 0]
    out.append(f"Refunds: {len(refunds)}")
    if refunds:
        worst = min(refunds)
        dollars, rest = divmod(abs(worst), 100)
        out.append(f"Largest refund: -${dollars:,}.{rest:02d}")

    if sales:
        average = round(total / len(sales))
        sign = "-" if average < 0 else ""
        dollars, rest = divmod(abs(average), 100)
        out.append(f"Average sale: {sign}${dollars:,}.{rest:02d}")
    return "\n".join(out) + "\n"


def main(argv):
    sys.stdout.write(render(load(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
