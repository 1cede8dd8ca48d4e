"""python -m nmt translate -m DIR [options] < input > output: nmt.Translator as a filter.

A thin front of the same calls as the Python API (the nmt command has the whole option set).
"""
import argparse
import sys

from ._translator import Translator


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nmt", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("translate", help="translate stdin (one text per line) to stdout")
    t.add_argument("-m", "--model", action="append", required=True, help="model directory (repeat: an ensemble)")
    t.add_argument("--beam", type=int, default=1)
    t.add_argument("--nbest", type=int, default=1)
    t.add_argument("--alpha", type=float, default=0.6)
    t.add_argument("--int8", action="store_true")
    t.add_argument("--threads", type=int, default=0)
    t.add_argument("--whole-lines", action="store_true", help="do not split lines into sentences")
    args = parser.parse_args(argv)
    try:
        with Translator(args.model, int8=args.int8, threads=args.threads) as translator:
            lines = sys.stdin.read().splitlines()
            results = translator.translate_batch(lines, beam=args.beam, nbest=args.nbest, alpha=args.alpha,
                                                 split_sentences=not args.whole_lines)
    except (ValueError, TypeError, FileNotFoundError) as e:
        print(f"python -m nmt: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"python -m nmt: error: {e}", file=sys.stderr)
        return 1
    for r in results:
        for h in r.nbest or [r]:
            sys.stdout.write(h.text + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
