import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Offline by construction: no analytics, no hub calls, no tracing (ecosystem-notes, sec. 7).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("LANGSMITH_TRACING", None)

# Every test run gets its own data directory: nothing is written to the user's home.
if "GPU_ADVISOR_HOME" not in os.environ:
    import tempfile

    os.environ["GPU_ADVISOR_HOME"] = tempfile.mkdtemp(prefix="gpu-advisor-test-")
