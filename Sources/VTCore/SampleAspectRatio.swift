/// Width:height of one sample (pixel): the SAR of H.264, the `A` tag of Y4M, V4L2's
/// pixelaspect, CoreVideo's `kCVImageBufferPixelAspectRatioKey`.
public struct SampleAspectRatio: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width):\(height)" }
}
