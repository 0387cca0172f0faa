import CYUV
import VTCore

/// Shrinks a picture's luma to the motion detector's analysis picture by averaging (libyuv's
/// box filter), in steps of a quarter while the picture is at least four times as wide and
/// as high as the analysis picture, then the rest of the way in one step.
///
/// Why the steps: libyuv has a fast path for exactly a quarter, and its general box filter is
/// several times slower per source pixel; an average of averages over whole blocks is the same
/// average. 1920x1080 → 480x270 → 160x90 costs about half of 1920x1080 → 160x90 directly.
final class MotionAnalysisScaler {
    let width: Int
    let height: Int
    /// The quarter-size steps for the current source size, largest first.
    private var steps: [(width: Int, height: Int, pixels: UnsafeMutablePointer<UInt8>)] = []
    private var sourceSize = (width: 0, height: 0)

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    deinit {
        for step in steps { step.pixels.deallocate() }
    }

    /// Shrinks the `sourceWidth` × `sourceHeight` plane into `target` (the analysis size,
    /// rows `width` apart).
    func shrink(_ plane: PixelPlane, sourceWidth: Int, sourceHeight: Int, into target: UnsafeMutablePointer<UInt8>) {
        if sourceSize != (sourceWidth, sourceHeight) { planSteps(sourceWidth: sourceWidth, sourceHeight: sourceHeight) }
        var from = UnsafePointer(plane.baseAddress)
        var fromStride = plane.bytesPerRow
        var fromSize = (width: sourceWidth, height: sourceHeight)
        for step in steps {
            ScalePlane(from, Int32(fromStride), Int32(fromSize.width), Int32(fromSize.height),
                       step.pixels, Int32(step.width), Int32(step.width), Int32(step.height), kFilterBox)
            from = UnsafePointer(step.pixels)
            fromStride = step.width
            fromSize = (step.width, step.height)
        }
        ScalePlane(from, Int32(fromStride), Int32(fromSize.width), Int32(fromSize.height),
                   target, Int32(width), Int32(width), Int32(height), kFilterBox)
    }

    private func planSteps(sourceWidth: Int, sourceHeight: Int) {
        for step in steps { step.pixels.deallocate() }
        steps = []
        var size = (width: sourceWidth, height: sourceHeight)
        // The last quarter that lands on the analysis size is the final step's, straight
        // into the target.
        while size.width % 4 == 0, size.height % 4 == 0, size.width / 4 >= width, size.height / 4 >= height,
              (size.width / 4, size.height / 4) != (width, height) {
            size = (size.width / 4, size.height / 4)
            steps.append((size.width, size.height, .allocate(capacity: size.width * size.height)))
        }
        sourceSize = (sourceWidth, sourceHeight)
    }
}
