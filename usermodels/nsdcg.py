"""nsDCG: sDCG's session user, normalised by its value on the ideal session."""

from rpdi.metrics.sessions import ideal_session
from rpdi.usermodels.sdcg import SessionDCG


class NormalisedSessionDCG(SessionDCG):
    """sDCG's user (:class:`usermodels.sdcg.SessionDCG`); its expected total gain is divided by
    the same user's on the ideal session, every turn its own ideal ranking
    (:func:`metrics.sessions.ideal_session`), a constant per session: nsDCG.
    Reference: Järvelin, Price, Delcambre & Nielsen (ECIR 2008); Kanoulas et al. (SIGIR 2011).
    """

    measure_name = "nsDCG"
    normalised = True

    def ideal_rankings(self, rankings):
        return ideal_session(rankings)
