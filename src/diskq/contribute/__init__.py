"""``diskq contribute``: from a result document to an open pull request.

The steps (:mod:`diskq.contribute.flow`) reuse what ``diskq sign`` and ``diskq validate`` do:
the result is checked (:mod:`diskq.submission.contributable`, :mod:`diskq.submission.complete`),
what it publishes is shown and can be reduced (:mod:`.privacy`), it is signed with a key GitHub
publishes for the contributor (:mod:`.keys`), validated exactly as the pull-request check
validates it (:mod:`diskq.submission.validate_tree`, :mod:`diskq.submission.signers`), committed
on a branch without touching the working tree (:mod:`.git`), pushed and proposed with ``gh``
(:mod:`.gh`, the one place diskq calls it). The row the drive gets in the database is rendered by
:mod:`.row`, for the pull request's body and for the comment the pull-request workflow posts.
"""
