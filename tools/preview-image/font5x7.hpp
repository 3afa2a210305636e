// Text for the preview image: a 5 x 7 pixel bitmap font (printable ASCII
// letters, digits and the usual punctuation), scaled by whole pixels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fdk_tools {

constexpr int kGlyphWidth = 5, kGlyphHeight = 7;

// Pixels `text` takes along x: one blank column after each glyph.
int text_width(const std::string& text, int scale);

// Draws `text` with its top-left corner at (x0, y0) into a width x height
// 8-bit image, clipped to it.
void draw_text(std::vector<uint8_t>& pixels, int width, int height, int x0, int y0,
               const std::string& text, int scale, uint8_t ink);

}  // namespace fdk_tools
