-- PostgreSQL schema version 22. Never edit: append a new step instead.
-- Ready-made texts gain a purpose: 'reject', the reasons a reviewer gives when rejecting
-- an item back to its maker (issue 29 §1).
ALTER TABLE queue_texts DROP CONSTRAINT queue_texts_purpose_check,
    ADD CONSTRAINT queue_texts_purpose_check CHECK (purpose IN ('result', 'fail', 'skip',
        'release', 'park', 'comment', 'reject'));
