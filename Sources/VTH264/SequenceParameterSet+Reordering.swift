extension SequenceParameterSet {
    /// max_num_reorder_frames: how many frames may precede a frame in decode order and follow
    /// it in output order. The VUI's bitstream_restriction gives it; when the SPS does not, it
    /// is inferred as E.2.1 says: 0 for the intra profiles (profile_idc 44, 86, 100, 110, 122
    /// or 244 with constraint_set3_flag), MaxDpbFrames for any other.
    ///
    /// A decoder that outputs pictures earlier than this must guess the reordering, and finds
    /// out only when a picture arrives that should have been shown before one it already
    /// gave: libavcodec then drops that picture.
    public var maxNumReorderFrames: Int {
        if let restriction = vui?.bitstreamRestriction { return restriction.maxNumReorderFrames }
        if [44, 86, 100, 110, 122, 244].contains(profileIdc) && hasConstraintSet(3) { return 0 }
        return maxDpbFrames
    }

    /// MaxDpbFrames (A.3.1 item h, A.3.2 item f): the frames the level's decoded picture
    /// buffer holds at this picture size, at most 16. A level_idc outside Table A-1 gets 16.
    public var maxDpbFrames: Int {
        let frameMacroblocks = picWidthInMbs * (frameMbsOnly ? 1 : 2) * picHeightInMapUnits
        guard let macroblocks = maxDpbMacroblocks, frameMacroblocks > 0 else { return 16 }
        return min(macroblocks / frameMacroblocks, 16)
    }

    /// MaxDpbMbs of the SPS's level (Table A-1); level 1b has level 1's.
    private var maxDpbMacroblocks: Int? {
        let idc = level == "1b" ? 10 : levelIdc
        return H264Level.all.first { $0.idc == idc }?.maxDpbMacroblocks
    }
}
