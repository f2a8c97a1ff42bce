from .test_ingest_local import *  # noqa
from affidavit.providers.local import LocalProvider
import affidavit.providers.local as L

def test_dump(vault, tmp_path, monkeypatch):
    orig = LocalProvider.complete
    def spy(self, request):
        c = orig(self, request)
        print("REPLY", c.usage.completion_tokens, repr(c.text)[:3000])
        return c
    monkeypatch.setattr(LocalProvider, "complete", spy)
    test_local_model_cannot_get_an_unverified_claim_into_the_wiki(vault, tmp_path)
