#!/usr/bin/env python3
"""One layer of the Graph Challenge's network as a Matrix Market file, for bench_spmm --matrix.

    tessera-spdnn --neurons 4096 --layers 10 --inputs 10 --write /tmp/net --quiet
    bench/spdnn_layer_to_mtx.py /tmp/net/neuron4096/n4096-l10.tsv /tmp/w4096-l10.mtx

The challenge's file holds W(l) (row: input neuron, column: output neuron, 1-based); the file
written is W'(l), the form tessera-spdnn's spmm mode multiplies (neurons of the output as rows).
Layers 1 to log2(N/16) keep the neurons' order; later ones permute them (docs/spdnn.md).
"""
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, target = sys.argv[1], sys.argv[2]
    entries = []
    size = 0
    with open(source) as f:
        for line_number, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 3:
                print(f"{source}:{line_number}: expected 'row column value', found {line.strip()!r}", file=sys.stderr)
                return 1
            row, column = int(fields[0]), int(fields[1])
            size = max(size, row, column)
            entries.append((column, row, fields[2]))
    with open(target, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{size} {size} {len(entries)}\n")
        for row, column, value in entries:
            f.write(f"{row} {column} {value}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
