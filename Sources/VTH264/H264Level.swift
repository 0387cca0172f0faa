import VTCore

/// The limits of the H.264 levels (Table A-1) that decide which level a stream needs.
public struct H264Level: Sendable, Equatable {
    public let name: String
    public let idc: Int
    /// MaxMBPS: macroblocks per second.
    public let maxMacroblocksPerSecond: Int
    /// MaxFS: macroblocks per picture.
    public let maxFrameSize: Int
    /// MaxDpbMbs.
    public let maxDpbMacroblocks: Int
    /// MaxBR in units of 1000 bit/s (VCL, Baseline/Main; High allows 1.25 times this).
    public let maxBitRate: Int

    public static let all: [H264Level] = [
        H264Level(name: "1", idc: 10, maxMacroblocksPerSecond: 1485, maxFrameSize: 99, maxDpbMacroblocks: 396, maxBitRate: 64),
        H264Level(name: "1.1", idc: 11, maxMacroblocksPerSecond: 3000, maxFrameSize: 396, maxDpbMacroblocks: 900, maxBitRate: 192),
        H264Level(name: "1.2", idc: 12, maxMacroblocksPerSecond: 6000, maxFrameSize: 396, maxDpbMacroblocks: 2376, maxBitRate: 384),
        H264Level(name: "1.3", idc: 13, maxMacroblocksPerSecond: 11880, maxFrameSize: 396, maxDpbMacroblocks: 2376, maxBitRate: 768),
        H264Level(name: "2", idc: 20, maxMacroblocksPerSecond: 11880, maxFrameSize: 396, maxDpbMacroblocks: 2376, maxBitRate: 2000),
        H264Level(name: "2.1", idc: 21, maxMacroblocksPerSecond: 19800, maxFrameSize: 792, maxDpbMacroblocks: 4752, maxBitRate: 4000),
        H264Level(name: "2.2", idc: 22, maxMacroblocksPerSecond: 20250, maxFrameSize: 1620, maxDpbMacroblocks: 8100, maxBitRate: 4000),
        H264Level(name: "3", idc: 30, maxMacroblocksPerSecond: 40500, maxFrameSize: 1620, maxDpbMacroblocks: 8100, maxBitRate: 10000),
        H264Level(name: "3.1", idc: 31, maxMacroblocksPerSecond: 108000, maxFrameSize: 3600, maxDpbMacroblocks: 18000, maxBitRate: 14000),
        H264Level(name: "3.2", idc: 32, maxMacroblocksPerSecond: 216000, maxFrameSize: 5120, maxDpbMacroblocks: 20480, maxBitRate: 20000),
        H264Level(name: "4", idc: 40, maxMacroblocksPerSecond: 245760, maxFrameSize: 8192, maxDpbMacroblocks: 32768, maxBitRate: 20000),
        H264Level(name: "4.1", idc: 41, maxMacroblocksPerSecond: 245760, maxFrameSize: 8192, maxDpbMacroblocks: 32768, maxBitRate: 50000),
        H264Level(name: "4.2", idc: 42, maxMacroblocksPerSecond: 522240, maxFrameSize: 8704, maxDpbMacroblocks: 34816, maxBitRate: 50000),
        H264Level(name: "5", idc: 50, maxMacroblocksPerSecond: 589824, maxFrameSize: 22080, maxDpbMacroblocks: 110400, maxBitRate: 135000),
        H264Level(name: "5.1", idc: 51, maxMacroblocksPerSecond: 983040, maxFrameSize: 36864, maxDpbMacroblocks: 184320, maxBitRate: 240000),
        H264Level(name: "5.2", idc: 52, maxMacroblocksPerSecond: 2073600, maxFrameSize: 36864, maxDpbMacroblocks: 184320, maxBitRate: 240000),
        H264Level(name: "6", idc: 60, maxMacroblocksPerSecond: 4177920, maxFrameSize: 139264, maxDpbMacroblocks: 696320, maxBitRate: 240000),
        H264Level(name: "6.1", idc: 61, maxMacroblocksPerSecond: 8355840, maxFrameSize: 139264, maxDpbMacroblocks: 696320, maxBitRate: 480000),
        H264Level(name: "6.2", idc: 62, maxMacroblocksPerSecond: 16711680, maxFrameSize: 139264, maxDpbMacroblocks: 696320, maxBitRate: 800000),
    ]

    /// The lowest level whose limits hold a stream of this size, rate, reference count and
    /// peak bit rate (bit/s, nil when unconstrained); the highest level when none does.
    public static func minimum(width: Int, height: Int, frameRate: FrameRate, referenceFrames: Int,
                               peakBitRate: Int64?, highProfile: Bool) -> H264Level {
        let widthMbs = (width + 15) / 16
        let heightMbs = (height + 15) / 16
        let frameSize = widthMbs * heightMbs
        let perSecond = Int((Double(frameSize) * frameRate.framesPerSecond).rounded(.up))
        let factor: Int64 = highProfile ? 1250 : 1000
        return all.first { level in
            frameSize <= level.maxFrameSize
                && widthMbs * widthMbs <= 8 * level.maxFrameSize
                && heightMbs * heightMbs <= 8 * level.maxFrameSize
                && perSecond <= level.maxMacroblocksPerSecond
                && frameSize * referenceFrames <= level.maxDpbMacroblocks
                && (peakBitRate ?? 0) <= Int64(level.maxBitRate) * factor
        } ?? all[all.count - 1]
    }
}
