"""The LangChain ingestion pipeline most teams write first, as bench/retrieval/langchain.ts's peer.

A PDF loader from langchain-community, RecursiveCharacterTextSplitter at svc's chunk size and overlap (counted in
words, as svc's chunker counts them), and langchain-postgres' PGVector on the same Postgres, with langchain-core's
DeterministicFakeEmbedding of svc's dimension so no side waits on a model.

It runs as a child process driven by one JSON command per line on stdin and answers one JSON line on stdout per
command, so the bench can alternate it with svc's uploads while it stays warm:
  {"op": "each", "collection": c, "files": [...]}  every file loaded, split and stored one after another
  {"op": "folder", "collection": c, "dir": d}      DirectoryLoader over the folder, split, stored in one call
Each answer holds the seconds the work took (interpreter start and imports excluded), of them the seconds loading,
splitting and storing, and the pages it loaded, then
for the whole collection so far the chunks the splitter made and a sha256 of their texts (sorted, joined by NUL),
which the bench checks against what PGVector stored.
Run by bench/retrieval/langchain.ts with the python of bench/retrieval/langchain-venv.sh.
"""

import argparse
import hashlib
import json
import sys
import time

from langchain_community.document_loaders import DirectoryLoader, PyPDFium2Loader, PyPDFLoader
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_postgres import PGVector
from langchain_text_splitters import RecursiveCharacterTextSplitter

LOADERS = {"pypdf": PyPDFLoader, "pypdfium2": PyPDFium2Loader}


def words(text: str) -> int:
    """svc's chunk size is in words (runs of non-whitespace): the splitter measures its pieces the same way."""
    return len(text.split())


def digest(texts):
    return hashlib.sha256("\0".join(sorted(texts)).encode("utf-8")).hexdigest()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dsn", required=True, help="postgresql+psycopg://user:password@host:port/database")
    p.add_argument("--loader", choices=sorted(LOADERS), default="pypdf")
    p.add_argument("--chunk-size", type=int, required=True)
    p.add_argument("--chunk-overlap", type=int, required=True)
    p.add_argument("--dim", type=int, required=True)
    args = p.parse_args()

    loader_cls = LOADERS[args.loader]
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap, length_function=words
    )
    embeddings = DeterministicFakeEmbedding(size=args.dim)
    stores = {}
    made = {}  # collection -> every chunk text the splitter made for it

    def store(collection: str) -> PGVector:
        # one store (and its engine's connection pool) per collection, made before any timing starts
        if collection not in stores:
            stores[collection] = PGVector(
                embeddings=embeddings, connection=args.dsn, collection_name=collection, embedding_length=args.dim
            )
        return stores[collection]

    for line in sys.stdin:
        cmd = json.loads(line)
        vs = store(cmd["collection"])
        pages = 0
        texts = made.setdefault(cmd["collection"], [])
        stages = {"load": 0.0, "split": 0.0, "store": 0.0}  # where the time went, for the bench's note
        t0 = time.perf_counter()

        def run(load):
            t = time.perf_counter()
            docs = load()
            t1 = time.perf_counter()
            chunks = splitter.split_documents(docs)
            t2 = time.perf_counter()
            vs.add_documents(chunks)
            stages["load"] += t1 - t
            stages["split"] += t2 - t1
            stages["store"] += time.perf_counter() - t2
            texts.extend(c.page_content for c in chunks)
            return len(docs)

        if cmd["op"] == "each":
            for path in cmd["files"]:
                pages += run(loader_cls(path).load)
        elif cmd["op"] == "folder":
            pages = run(DirectoryLoader(cmd["dir"], glob="*.pdf", loader_cls=loader_cls).load)
        else:
            raise ValueError(f"unknown op {cmd['op']!r}")
        seconds = time.perf_counter() - t0
        answer = {"seconds": seconds, "pages": pages, "stages": stages, "chunks": len(texts), "digest": digest(texts)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
