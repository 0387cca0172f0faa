extension StreamReport {
    /// The report for a terminal, one topic per line:
    ///
    ///     frames: 120 (IDR 4; I 4, P 76, B 40)
    ///     GOP lengths: 30 30 30 30
    ///     every IDR has SPS and PPS: yes
    ///     NAL units: slice_idr 4, slice_non_idr 116, sei 1, sps 4, pps 4
    ///     SPS: High 3.1, 1366x768 (coded 1376x768), 4:2:0 8-bit, progressive, POC type 0, 4 reference frames
    ///          SAR 1:1, video range, colour bt709/bt709/bt709, 30000/1001 fps (fixed), reorder depth 2
    ///     PPS: CABAC, 8x8 transform, weighted P, implicit weighted B, pic_init_qp 23, id 0 (SPS 0)
    public var textDescription: String {
        var lines: [String] = []
        let types = Self.ordered(frameTypes, first: ["I", "P", "B", "SP", "SI"])
            .map { "\($0.key) \($0.value)" }
        lines.append("frames: \(frames) (IDR \(idrFrames)\(types.isEmpty ? "" : "; " + types.joined(separator: ", ")))")
        lines.append("GOP lengths: " + (gopLengths.isEmpty ? "none (no IDR frame)" : Self.gopList(gopLengths)))
        lines.append("every IDR has SPS and PPS: \(everyIDRHasParameterSets ? "yes" : "no")")
        let order = [NALUnitType.sliceIDR, .sliceNonIDR, .sei, .sps, .pps, .accessUnitDelimiter].map(\.key)
        lines.append("NAL units: " + Self.ordered(nalCounts, first: order)
            .map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        if let sps {
            lines.append("SPS: " + sps.pictureLine)
            lines.append("     " + sps.displayLine)
        } else {
            lines.append("SPS: none")
        }
        lines.append("PPS: " + (pps?.line ?? "none"))
        return lines.joined(separator: "\n")
    }

    /// Long GOP lists are shortened: the first 20, then a count of the rest.
    private static func gopList(_ lengths: [Int]) -> String {
        let shown = lengths.prefix(20).map(String.init).joined(separator: " ")
        return lengths.count > 20 ? shown + " … (\(lengths.count) GOPs)" : shown
    }

    /// Keys in the given order first, then the rest alphabetically, so output is stable.
    private static func ordered(_ counts: [String: Int], first: [String]) -> [(key: String, value: Int)] {
        let known = first.compactMap { key in counts[key].map { (key: key, value: $0) } }
        let rest = counts.filter { !first.contains($0.key) }.sorted { $0.key < $1.key }
        return known + rest.map { (key: $0.key, value: $0.value) }
    }
}

extension StreamReport.SequenceSummary {
    fileprivate var pictureLine: String {
        let names = ["monochrome", "4:2:0", "4:2:2", "4:4:4"]
        let chroma = names.indices.contains(chromaFormatIdc) ? names[chromaFormatIdc] : "chroma_format_idc \(chromaFormatIdc)"
        let depth = bitDepthLuma == bitDepthChroma ? "\(bitDepthLuma)-bit" : "\(bitDepthLuma)/\(bitDepthChroma)-bit"
        var size = "\(width)x\(height)"
        if codedWidth != width || codedHeight != height { size += " (coded \(codedWidth)x\(codedHeight))" }
        let scan = frameMbsOnly ? "progressive" : mbAdaptiveFrameField ? "interlaced (MBAFF)" : "interlaced"
        var parts = ["\(profile) \(level)", size, "\(chroma) \(depth)", scan, "POC type \(picOrderCntType)",
                     "\(maxNumRefFrames) reference frame\(maxNumRefFrames == 1 ? "" : "s")"]
        if scalingMatrixPresent { parts.append("scaling matrices") }
        return parts.joined(separator: ", ")
    }

    fileprivate var displayLine: String {
        var parts = ["SAR \(sar ?? "unspecified")"]
        if let videoFullRange { parts.append(videoFullRange ? "full range" : "video range") }
        if let colourPrimaries, let transferCharacteristics, let matrixCoefficients {
            parts.append("colour \(colourPrimaries)/\(transferCharacteristics)/\(matrixCoefficients)")
        }
        if let frameRate {
            parts.append("\(frameRate) fps" + (fixedFrameRate == true ? " (fixed)" : " (variable)"))
        } else {
            parts.append("no timing information")
        }
        if let maxNumReorderFrames { parts.append("reorder depth \(maxNumReorderFrames)") }
        if let hrdBitRate { parts.append("HRD \(hrdBitRate) bit/s") }
        return parts.joined(separator: ", ")
    }
}

extension StreamReport.PictureSummary {
    fileprivate var line: String {
        var parts = [entropyCoding == .cabac ? "CABAC" : "CAVLC"]
        if transform8x8Mode { parts.append("8x8 transform") }
        if weightedPred { parts.append("weighted P") }
        if weightedBipredIdc != 0 { parts.append(weightedBipredIdc == 1 ? "explicit weighted B" : "implicit weighted B") }
        if scalingMatrixPresent { parts.append("scaling matrices") }
        parts.append("pic_init_qp \(picInitQp)")
        parts.append("id \(picParameterSetId) (SPS \(seqParameterSetId))")
        return parts.joined(separator: ", ")
    }
}
