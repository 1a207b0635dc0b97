#!/usr/bin/env bash
# The Python environment of bench/retrieval's LangChain peer (langchain_ingest.py): LangChain's PDF loaders,
# its text splitter and langchain-postgres' PGVector, pinned, under $SVC_CACHE/langchain-venv. Built from PyPI once
# (scripts/env.sh python_venv: a no-op while the pins are unchanged). Prints the venv's python on stdout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../../scripts/env.sh"
# pypdf is what PyPDFLoader reads with, pypdfium2 what PyPDFium2Loader reads with; psycopg is PGVector's driver.
python_venv langchain-venv \
  langchain-community==0.4.2 langchain-core==1.8.1 langchain-text-splitters==1.1.3 langchain-postgres==0.0.19 \
  pypdf==7.1.0 pypdfium2==5.15.2 psycopg==3.3.9 psycopg-binary==3.3.9
echo "$venv/bin/python"
