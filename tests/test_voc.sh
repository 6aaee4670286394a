#!/bin/sh
# weights/voc2yolo.py: VOC XML boxes to YOLO label rows, as the official VOC
# conversion makes them (tests/data/voc/README.md says where each expected
# file comes from). Four pictures of the raccoon dataset split as its CSV
# files split them; cases of its own (several classes, difficult, parts,
# no <size>, boxes outside the picture, no object); bad input gets one line
# and exit status 1; the loader opens what it writes. The pictures are
# stand-ins (only nosize.png is read, for its size): the importer copies
# them and reads nothing else of them. Run from the repository root.
. tests/common.sh
V=tests/data/voc
import() { python3 weights/voc2yolo.py "$@" > "$T/out" 2> "$T/err"; }
same() {   # expected folder, imported labels folder: the same files, rows equal to 1e-6
    for e in "$1"/*.txt; do
        g="$2/$(basename "$e")"
        [ -f "$g" ] || { echo "no $g"; return 1; }
        awk 'NR == FNR { want[FNR] = $0; n = FNR; next }
             { m = FNR; split(want[FNR], w, " ")
               if (NF != 5 || $1 != w[1]) bad = 1
               for (i = 2; i <= 5; i++) { d = $i - w[i]; if (d > 1e-6 || d < -1e-6) bad = 1 } }
             END { if (m != n || bad) { printf "%s: rows differ from %s\n", FILENAME, ARGV[1]; exit 1 } }' "$e" "$g" || return 1
    done
    [ "$(ls "$1" | wc -l)" = "$(ls "$2" | wc -l)" ] || { echo "$2: $(ls "$2" | wc -l) files, want $(ls "$1" | wc -l)"; return 1; }
}
stand_ins() {   # a folder of XML files: an empty picture beside each (nosize.png: the real one)
    mkdir -p "$2/annotations" "$2/images"
    cp "$1"/*.xml "$2/annotations/"
    for x in "$1"/*.xml; do : > "$2/images/$(basename "$x" .xml).jpg"; done
}

# 1. raccoon: its train and test split from its CSV files (a row a box), labels as the official's formula
stand_ins $V/raccoon/annotations "$T/r"
if import "$T/r" "$T/r-out" --split train=$V/raccoon/train_labels.csv --split val=$V/raccoon/test_labels.csv &&
   same $V/raccoon/expected/train "$T/r-out/labels/train" > "$T/why" && same $V/raccoon/expected/val "$T/r-out/labels/val" > "$T/why" &&
   [ -f "$T/r-out/images/train/raccoon-63.jpg" ] && [ -f "$T/r-out/images/val/raccoon-105.jpg" ] &&
   grep -q '^nc: 1$' "$T/r-out/data.yaml" && grep -q '^  0: raccoon$' "$T/r-out/data.yaml" &&
   grep -q '^val: images/val$' "$T/r-out/data.yaml"; then
    ok "raccoon: 4 pictures split by its CSV files, 5 boxes as the official conversion: $(cat "$T/out")"
else bad "raccoon: $(cat "$T/why" "$T/err" "$T/out")"; fi

# 2. cases of its own, the classes given (person then is unknown and left out) and found in the XML
stand_ins $V/cases/annotations "$T/c"
rm "$T/c/images/nosize.jpg"; cp $V/cases/images/nosize.png "$T/c/images/"
if import "$T/c" "$T/c-named" --names cat,dog && same $V/cases/expected-named "$T/c-named/labels/train" > "$T/why" &&
   grep -q '1 difficult objects left out; 1 objects of classes not in the list left out (person); 2 boxes clipped to their picture; 2 boxes outside their picture dropped; 1 sizes read from the picture' "$T/out"; then
    ok "given classes: difficult, unknown class, no <size>, boxes outside: $(tail -n 1 "$T/out")"
else bad "given classes: $(cat "$T/why" "$T/err" "$T/out")"; fi
if import "$T/c" "$T/c-all" && same $V/cases/expected-all "$T/c-all/labels/train" > "$T/why" &&
   grep -q '^nc: 3$' "$T/c-all/data.yaml" && grep -q '^  2: person$' "$T/c-all/data.yaml" && ! grep -q hand "$T/c-all/data.yaml"; then
    ok "classes from the XML: cat dog person, sorted (a person's <part> is no object)"
else bad "classes from the XML: $(cat "$T/why" "$T/err" "$T/out")"; fi
if import "$T/c" "$T/c-keep" --names cat,dog,person --keep-difficult && [ "$(wc -l < "$T/c-keep/labels/train/several.txt")" = 4 ]; then
    ok "--keep-difficult keeps the difficult person"
else bad "--keep-difficult: $(cat "$T/err" "$T/out")"; fi

# 3. the loader opens the import (the stand-ins made real pictures)
for p in "$T/c-all/images/train/"*.jpg; do cp $V/cases/images/nosize.png "$p"; done
if ./tests/bench_loader --data "$T/c-all/data.yaml" --img 64 --batch 4 --batches 1 --workers 0 --sum > "$T/out" 2> "$T/err"; then
    ok "the loader reads the imported dataset: $(grep -c '^val batch' "$T/out") validation batch, $(grep -o '[0-9]* targets' "$T/out" | tail -n 1)"
else bad "the loader refuses the import: $(cat "$T/err")"; fi

# 4. bad input: one line on stderr naming the file, exit status 1
for x in malformed badnumber inverted; do
    rm -rf "$T/b"; mkdir -p "$T/b/annotations" "$T/b/images"
    cp $V/cases/bad/$x.xml "$T/b/annotations/"; : > "$T/b/images/$x.jpg"
    import "$T/b" "$T/b-out"; rc=$?
    if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q "$x.xml" "$T/err"; then ok "$x: $(cat "$T/err")"
    else bad "$x: exit $rc, stderr '$(cat "$T/err")'"; fi
done
printf 'raccoon-1\nraccoon-2\n' > "$T/list"
import "$T/r" "$T/r-bad" --split train="$T/list"; rc=$?
if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -q 'raccoon-2' "$T/err"; then ok "a split naming a picture without XML: $(cat "$T/err")"
else bad "a split naming a picture without XML: exit $rc, stderr '$(cat "$T/err")'"; fi
import "$T/r" "$T/r-bad" --names raccoon,raccoon; rc=$?
if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ]; then ok "a class given twice: $(cat "$T/err")"
else bad "a class given twice: exit $rc, stderr '$(cat "$T/err")'"; fi
[ $fail = 0 ]
