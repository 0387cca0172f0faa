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

    /// True when both stand for the same ratio (16:15 and 32:30), whatever the size of the
    /// terms: the products are compared at double width, so none can overflow.
    public func hasSameRatio(as other: SampleAspectRatio) -> Bool {
        width.multipliedFullWidth(by: other.height) == height.multipliedFullWidth(by: other.width)
    }
}
