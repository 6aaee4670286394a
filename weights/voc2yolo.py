#!/usr/bin/env python3
"""Import a Pascal-VOC-format dataset (one XML file of boxes a picture) as a
YOLO dataset that train, val and the official code read, with nothing but
the Python standard library.

    python3 weights/voc2yolo.py VOC_DIR OUT_DIR [--names a,b,... | --names-file FILE]
                                [--split NAME=LIST ...] [--keep-difficult]

VOC_DIR holds the XML files in Annotations/ or annotations/ and the pictures
in JPEGImages/ or images/ (or name them with --annotations, --images).
OUT_DIR gets images/NAME/ (the pictures, hard-linked where the file system
allows, else copied), labels/NAME/ (one text file a picture, a row a box:
class cx cy w h, normalised to the picture) and data.yaml (path, the splits,
nc, names), which `train --data OUT_DIR/data.yaml` reads.

A box becomes a row as the official YOLOv5/YOLOv9 VOC conversion (the
download script of data/VOC.yaml) makes it: VOC counts pixels from 1, so
the centre is ((xmin + xmax) / 2 - 1, (ymin + ymax) / 2 - 1), the size
(xmax - xmin, ymax - ymin), both divided by the picture's width and height
from the XML's <size>. As there, an object marked <difficult>1</difficult>
is left out (--keep-difficult keeps it), <truncated> changes nothing, and an
object whose class is not in the given list is left out. Where the official
script would stop or write rows its own loader refuses, this one goes on:
a missing <difficult> counts as 0; a missing or zero <size> is read from the
picture's header (JPEG, PNG, BMP); a box reaching outside the picture is
clipped to it, and one with nothing left inside is dropped. Each of these
is counted in the summary printed at the end.

Classes: --names (a comma list) or --names-file (a name a line) gives the
list and its order; without either, every class named in the XML files
becomes one, in sorted order.

Splits: --split NAME=LIST takes the pictures that LIST names into split
NAME (train, val, test, or any other name). LIST is a text file: a picture
a line (its file name or its stem, as VOC's ImageSets/Main/*.txt, only the
first word of a line read), or a CSV file whose header has a 'filename'
column (as the raccoon dataset's data/train_labels.csv: a row a box, the
pictures repeated). A relative LIST is looked for in the current folder,
then in VOC_DIR. Without --split every picture goes to split train. The
yaml's val is split val, else test, else train.

Bad input (unreadable or malformed XML, a box whose corners are not numbers
or are in the wrong order, a split naming a picture without XML, a
picture that cannot be found) ends in one line naming the file and what is
wrong, and exit status 1; OUT_DIR may then hold part of the import.
"""
import argparse
import csv
import os
import shutil
import struct
import sys
import xml.etree.ElementTree as ET

MAX_XML_BYTES = 16 << 20   # a VOC annotation is a few kB
PICTURE_SUFFIXES = ('.jpg', '.jpeg', '.png', '.bmp', '.JPG', '.JPEG', '.PNG', '.BMP')


class Refused(Exception):
    """What is wrong with the input, in one line."""


def picture_size(path):
    """(width, height) from a JPEG, PNG or BMP header, or None."""
    with open(path, 'rb') as f:
        head = f.read(26)
        if head[:8] == b'\x89PNG\r\n\x1a\n' and head[12:16] == b'IHDR':
            return struct.unpack('>II', head[16:24])
        if head[:2] == b'BM':
            w, h = struct.unpack('<ii', head[18:26])
            return w, abs(h)
        if head[:2] != b'\xff\xd8':
            return None
        f.seek(2)
        while True:   # JPEG: walk the segments to the first start-of-frame
            marker = f.read(2)
            if len(marker) < 2 or marker[0] != 0xFF:
                return None
            if marker[1] in (0xD8, 0x01) or 0xD0 <= marker[1] <= 0xD7:
                continue
            n = f.read(2)
            if len(n) < 2:
                return None
            length = struct.unpack('>H', n)[0]
            if marker[1] in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                frame = f.read(5)
                if len(frame) < 5:
                    return None
                h, w = struct.unpack('>HH', frame[1:5])
                return w, h
            f.seek(length - 2, 1)


def read_xml(path):
    """The annotation's root element; a DOCTYPE (entities) is refused, as VOC has none."""
    try:
        with open(path, 'rb') as f:
            data = f.read(MAX_XML_BYTES + 1)
    except OSError as e:
        raise Refused(f'{path}: cannot read: {e.strerror}')
    if len(data) > MAX_XML_BYTES:
        raise Refused(f'{path}: larger than {MAX_XML_BYTES >> 20} MB, not a VOC annotation')
    if b'<!DOCTYPE' in data or b'<!ENTITY' in data:
        raise Refused(f'{path}: has a DOCTYPE or ENTITY declaration, which VOC annotations do not')
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise Refused(f'{path}: malformed XML: {e}')
    if root.tag != 'annotation':
        raise Refused(f"{path}: the root element is <{root.tag}>, not <annotation>")
    return root


def text_of(element, child):
    node = element.find(child)
    return node.text.strip() if node is not None and node.text else None


def number(path, what, text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise Refused(f"{path}: {what} is {'missing' if text is None else repr(text)}, not a number")
    if v != v or v in (float('inf'), float('-inf')):
        raise Refused(f'{path}: {what} is {text}, not a finite number')
    return v


def find_picture(images_dir, stem, named):
    """The picture of an annotation: its <filename> in the images folder, else the stem with a known suffix."""
    if named:
        p = os.path.join(images_dir, os.path.basename(named))
        if os.path.isfile(p):
            return p
    for suffix in PICTURE_SUFFIXES:
        p = os.path.join(images_dir, stem + suffix)
        if os.path.isfile(p):
            return p
    return None


class Counts:
    def __init__(self):
        self.pictures = self.boxes = self.difficult = self.unknown = self.clipped = self.dropped = self.sized = 0
        self.unknown_names = set()


def objects_of(path, root, keep_difficult):
    """(name, difficult, (xmin, ymin, xmax, ymax)) of each object, read as the official reads them."""
    out = []
    for k, obj in enumerate(root.iter('object')):
        name = text_of(obj, 'name')
        if name is None:
            raise Refused(f'{path}: object {k + 1} has no <name>')
        difficult = text_of(obj, 'difficult')
        difficult = number(path, f'object {k + 1} <difficult>', difficult) if difficult is not None else 0
        box = obj.find('bndbox')
        if box is None:
            raise Refused(f'{path}: object {k + 1} ({name}) has no <bndbox>')
        b = [number(path, f'object {k + 1} ({name}) <{c}>', text_of(box, c)) for c in ('xmin', 'ymin', 'xmax', 'ymax')]
        if b[2] < b[0] or b[3] < b[1]:
            raise Refused(f'{path}: object {k + 1} ({name}): xmin..xmax {b[0]:g}..{b[2]:g}, ymin..ymax {b[1]:g}..{b[3]:g}: '
                          'a corner is on the wrong side')
        if difficult == 1 and not keep_difficult:
            out.append((name, True, b))
        else:
            out.append((name, False, b))
    return out


def label_rows(path, objects, classes, w, h, counts):
    """The YOLO rows of one picture: VOC's 1-based corners made 0-based, clipped to the picture, normalised."""
    rows = []
    for name, difficult, (xmin, ymin, xmax, ymax) in objects:
        if difficult:
            counts.difficult += 1
            continue
        if name not in classes:
            counts.unknown += 1
            counts.unknown_names.add(name)
            continue
        x1, y1, x2, y2 = xmin - 1, ymin - 1, xmax - 1, ymax - 1
        c1, d1, c2, d2 = min(max(x1, 0), w), min(max(y1, 0), h), min(max(x2, 0), w), min(max(y2, 0), h)
        if c2 <= c1 or d2 <= d1:
            counts.dropped += 1
            continue
        if (c1, d1, c2, d2) != (x1, y1, x2, y2):
            counts.clipped += 1
        rows.append('%d %.6f %.6f %.6f %.6f' % (classes[name], (c1 + c2) / 2 / w, (d1 + d2) / 2 / h, (c2 - c1) / w, (d2 - d1) / h))
        counts.boxes += 1
    return rows


def split_names(spec, voc_dir):
    """NAME=LIST -> (NAME, [picture stems])."""
    if '=' not in spec:
        raise Refused(f"--split {spec}: expected NAME=LIST (e.g. train=ImageSets/Main/train.txt)")
    name, path = spec.split('=', 1)
    if not name or '/' in name or name in ('.', '..'):
        raise Refused(f'--split {spec}: {name!r} is not a split name')
    if not os.path.isfile(path) and os.path.isfile(os.path.join(voc_dir, path)):
        path = os.path.join(voc_dir, path)
    try:
        with open(path, newline='') as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise Refused(f'--split {spec}: cannot read {path}: {getattr(e, "strerror", None) or e}')
    header = next(csv.reader(lines[:1]), []) if lines else []
    if 'filename' in header:
        column = header.index('filename')
        picked = [row[column] for row in csv.reader(lines[1:]) if len(row) > column and row[column].strip()]
    else:
        picked = [line.split()[0] for line in lines if line.split()]
    stems, seen = [], set()
    for p in picked:
        stem = os.path.splitext(os.path.basename(p.strip()))[0] if p.endswith(PICTURE_SUFFIXES) else os.path.basename(p.strip())
        if stem not in seen:
            seen.add(stem)
            stems.append(stem)
    if not stems:
        raise Refused(f'--split {spec}: {path} names no picture')
    return name, stems


def place(src, dst):
    if os.path.lexists(dst):
        os.remove(dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def yaml_name(name):
    plain = name and name == name.strip() and not any(c in name for c in ':#\'"[]{},&*!|>%@`') and name[0] not in '-?'
    return name if plain else '"%s"' % name.replace('\\', '\\\\').replace('"', '\\"')


def run(args):
    voc = args.voc_dir
    ann = args.annotations or next((os.path.join(voc, d) for d in ('Annotations', 'annotations') if os.path.isdir(os.path.join(voc, d))), None)
    img = args.images or next((os.path.join(voc, d) for d in ('JPEGImages', 'images') if os.path.isdir(os.path.join(voc, d))), None)
    if not ann or not os.path.isdir(ann):
        raise Refused(f'{voc}: no Annotations/ or annotations/ folder (name it with --annotations)')
    if not img or not os.path.isdir(img):
        raise Refused(f'{voc}: no JPEGImages/ or images/ folder (name it with --images)')
    xmls = {os.path.splitext(f)[0]: os.path.join(ann, f) for f in sorted(os.listdir(ann)) if f.endswith('.xml')}
    if not xmls:
        raise Refused(f'{ann}: no .xml files')

    splits = [split_names(s, voc) for s in args.split] if args.split else [('train', sorted(xmls))]
    names_seen = [n for n, _ in splits]
    if len(set(names_seen)) != len(names_seen):
        raise Refused(f'--split: a split name is given twice ({", ".join(names_seen)})')
    for name, stems in splits:
        missing = [s for s in stems if s not in xmls]
        if missing:
            raise Refused(f'--split {name}: {len(missing)} pictures have no XML in {ann}, e.g. {missing[0]}')

    wanted = sorted({s for _, stems in splits for s in stems})
    parsed = {s: read_xml(xmls[s]) for s in wanted}
    objects = {s: objects_of(xmls[s], parsed[s], args.keep_difficult) for s in wanted}
    if args.names or args.names_file:
        if args.names_file:
            try:
                with open(args.names_file) as f:
                    names = [line.strip() for line in f if line.strip()]
            except OSError as e:
                raise Refused(f'--names-file {args.names_file}: cannot read: {e.strerror}')
        else:
            names = [n.strip() for n in args.names.split(',') if n.strip()]
        if not names or len(set(names)) != len(names):
            raise Refused(f'--names: {len(names)} names, {len(set(names))} different: give each class once')
    else:
        names = sorted({o[0] for s in wanted for o in objects[s] if not o[1]})
        if not names:
            raise Refused(f'{ann}: no object in the XML files, so no class (give them with --names)')
    classes = {n: i for i, n in enumerate(names)}

    counts = Counts()
    for split, stems in splits:
        os.makedirs(os.path.join(args.out_dir, 'images', split), exist_ok=True)
        os.makedirs(os.path.join(args.out_dir, 'labels', split), exist_ok=True)
        for s in stems:
            path, root = xmls[s], parsed[s]
            picture = find_picture(img, s, text_of(root, 'filename'))
            if picture is None:
                raise Refused(f'{path}: no picture {text_of(root, "filename") or s + ".*"} in {img}')
            size = root.find('size')
            w = number(path, '<size><width>', text_of(size, 'width')) if size is not None and text_of(size, 'width') else 0
            h = number(path, '<size><height>', text_of(size, 'height')) if size is not None and text_of(size, 'height') else 0
            if w <= 0 or h <= 0:
                wh = picture_size(picture)
                if not wh or wh[0] <= 0 or wh[1] <= 0:
                    raise Refused(f'{path}: no <size> and the size of {picture} cannot be read')
                w, h = wh
                counts.sized += 1
            rows = label_rows(path, objects[s], classes, w, h, counts)
            base = os.path.basename(picture)
            place(picture, os.path.join(args.out_dir, 'images', split, base))
            with open(os.path.join(args.out_dir, 'labels', split, os.path.splitext(base)[0] + '.txt'), 'w') as f:
                f.write(''.join(r + '\n' for r in rows))
            counts.pictures += 1

    have = [n for n, _ in splits]
    val = next((v for v in ('val', 'test', 'train') if v in have), have[0])
    train = 'train' if 'train' in have else have[0]
    with open(os.path.join(args.out_dir, 'data.yaml'), 'w') as f:
        f.write(f'# imported from {os.path.abspath(voc)} by weights/voc2yolo.py\n')
        f.write(f'path: {os.path.abspath(args.out_dir)}\ntrain: images/{train}\nval: images/{val}\n')
        for other in have:
            if other not in (train, val):
                f.write(f'{other}: images/{other}\n')
        f.write(f'nc: {len(names)}\nnames:\n' + ''.join(f'  {i}: {yaml_name(n)}\n' for i, n in enumerate(names)))
    per_split = ', '.join(f'{n} {len(stems)}' for n, stems in splits)
    print(f'voc2yolo: {counts.pictures} pictures ({per_split}), {counts.boxes} boxes, {len(names)} classes -> '
          f'{os.path.join(args.out_dir, "data.yaml")}')
    left = []
    if counts.difficult:
        left.append(f'{counts.difficult} difficult objects left out')
    if counts.unknown:
        left.append(f'{counts.unknown} objects of classes not in the list left out ({", ".join(sorted(counts.unknown_names)[:5])})')
    if counts.clipped:
        left.append(f'{counts.clipped} boxes clipped to their picture')
    if counts.dropped:
        left.append(f'{counts.dropped} boxes outside their picture dropped')
    if counts.sized:
        left.append(f'{counts.sized} sizes read from the picture (no <size> in the XML)')
    if left:
        print('voc2yolo: ' + '; '.join(left))


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1].strip(), description='VOC XML boxes to a YOLO dataset')
    ap.add_argument('voc_dir')
    ap.add_argument('out_dir')
    ap.add_argument('--annotations', help='the folder of XML files (default VOC_DIR/Annotations or annotations)')
    ap.add_argument('--images', help='the folder of pictures (default VOC_DIR/JPEGImages or images)')
    ap.add_argument('--names', help='the classes in order, comma-separated (default: those in the XML files, sorted)')
    ap.add_argument('--names-file', help='the classes in order, a name a line')
    ap.add_argument('--split', action='append', default=[], help='NAME=LIST: the pictures LIST names go to split NAME')
    ap.add_argument('--keep-difficult', action='store_true', help='keep objects marked difficult (the official drops them)')
    args = ap.parse_args()
    if args.names and args.names_file:
        ap.error('give --names or --names-file, not both')
    try:
        run(args)
    except Refused as e:
        print(f'voc2yolo: {e}', file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f'voc2yolo: {e.filename or ""}: {e.strerror}', file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
