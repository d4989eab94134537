#!/usr/bin/env python3
"""Print a sales report from a CSV of sales (region,product,cents).

    python3 report.py sales.csv

Refunds are sales with a negative amount.
"""

import csv
import sys

from money import format_cents


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
        out.append(f"  {region:<10} {format_cents(regions[region])}")

    total = sum(regions.values())
    out.append(f"Total: {format_cents(total)}")

    refunds = [c for _, _, c in sales if c < 0]
    out.append(f"Refunds: {len(refunds)}")
    if refunds:
        out.append(f"Largest refund: {format_cents(min(refunds))}")

    if sales:
        average = round(total / len(sales))
        out.append(f"Average sale: {format_cents(average)}")
    return "\n".join(out) + "\n"


def main(argv):
    sys.stdout.write(render(load(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
