//! PackBits, as `.anie` images use it: one stream per channel row (§2).
//!
//! Section numbers (§) refer to `docs/formats/anie.md`.

use super::error::PackBitsProblem;

/// Decodes one PackBits stream into `out`, which it must fill exactly.
///
/// Header byte `h` (signed): 0..=127 copies the next `h + 1` bytes; −127..=−1 repeats the next
/// byte `1 − h` times; −128 is refused (AnimeEffects' decoder hangs on it). Never writes past
/// `out`, so the output size is bounded by the caller's buffer whatever the input says.
pub(crate) fn packbits_decode(input: &[u8], out: &mut [u8]) -> Result<(), PackBitsProblem> {
    let width = out.len();
    let (mut i, mut o) = (0usize, 0usize);
    while i < input.len() {
        let at = i;
        let h = input[i] as i8;
        i += 1;
        match h {
            -128 => return Err(PackBitsProblem::NoOpHeader { at }),
            0..=127 => {
                let n = h as usize + 1;
                let Some(src) = input.get(i..i + n) else {
                    return Err(PackBitsProblem::LiteralOverrun {
                        at,
                        needed: n,
                        available: input.len() - i,
                    });
                };
                let Some(dst) = out.get_mut(o..o + n) else {
                    return Err(PackBitsProblem::TooLong { width, at });
                };
                dst.copy_from_slice(src);
                i += n;
                o += n;
            }
            _ => {
                let n = (1 - i32::from(h)) as usize;
                let Some(&b) = input.get(i) else {
                    return Err(PackBitsProblem::RepeatMissingByte { at });
                };
                let Some(dst) = out.get_mut(o..o + n) else {
                    return Err(PackBitsProblem::TooLong { width, at });
                };
                dst.fill(b);
                i += 1;
                o += n;
            }
        }
    }
    if o != width {
        return Err(PackBitsProblem::TooShort { width, decoded: o });
    }
    Ok(())
}

/// Encodes `src` as PackBits, appending to `out`, with AnimeEffects' choices (§2): a repeat
/// run starts as soon as three equal bytes appear, runs hold at most 128 bytes, and a literal
/// run stops just before a triple. Worst case `n + n/128 + 1` bytes.
pub(crate) fn packbits_encode(src: &[u8], out: &mut Vec<u8>) {
    let n = src.len();
    let mut i = 0;
    while i < n {
        let b = src[i];
        let mut run = 1;
        while i + run < n && run < 128 && src[i + run] == b {
            run += 1;
        }
        if run >= 3 {
            out.push((1 - run as i32) as i8 as u8);
            out.push(b);
            i += run;
            continue;
        }
        let start = i;
        while i < n && i - start < 128 {
            if i + 2 < n && src[i] == src[i + 1] && src[i] == src[i + 2] {
                break;
            }
            i += 1;
        }
        out.push((i - start - 1) as u8);
        out.extend_from_slice(&src[start..i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(src: &[u8]) -> Vec<u8> {
        let mut enc = Vec::new();
        packbits_encode(src, &mut enc);
        assert!(enc.len() <= src.len() + src.len() / 128 + 1);
        let mut dec = vec![0; src.len()];
        packbits_decode(&enc, &mut dec).unwrap();
        assert_eq!(dec, src);
        enc
    }

    #[test]
    fn encodes_runs_and_literals_as_animeeffects_does() {
        // 4 × 0xff → header −3, 0xff.
        assert_eq!(round(&[255; 4]), [0xfd, 0xff]);
        // Two equal bytes stay literal.
        assert_eq!(round(&[1, 1, 2]), [2, 1, 1, 2]);
        // A literal stops just before a triple.
        assert_eq!(round(&[1, 2, 3, 3, 3]), [1, 1, 2, 0xfe, 3]);
        // 130 equal bytes: a run of 128 (−127), then a literal of 2.
        assert_eq!(round(&[7; 130]), [0x81, 7, 1, 7, 7]);
        let ramp: Vec<u8> = (0..=255).collect();
        let enc = round(&ramp);
        assert_eq!(enc.len(), 256 + 2);
        assert!(round(&[]).is_empty());
    }

    #[test]
    fn decoding_refuses_what_does_not_fill_the_row_exactly() {
        let mut out = [0; 3];
        assert_eq!(
            packbits_decode(&[0x80], &mut out),
            Err(PackBitsProblem::NoOpHeader { at: 0 })
        );
        assert_eq!(
            packbits_decode(&[0xfd, 1], &mut out),
            Err(PackBitsProblem::TooLong { width: 3, at: 0 })
        );
        assert_eq!(
            packbits_decode(&[1, 5], &mut out),
            Err(PackBitsProblem::LiteralOverrun {
                at: 0,
                needed: 2,
                available: 1
            })
        );
        assert_eq!(
            packbits_decode(&[0xff], &mut out),
            Err(PackBitsProblem::RepeatMissingByte { at: 0 })
        );
        assert_eq!(
            packbits_decode(&[0xff, 9], &mut out),
            Err(PackBitsProblem::TooShort {
                width: 3,
                decoded: 2
            })
        );
        packbits_decode(&[0xff, 9, 0, 4], &mut out).unwrap();
        assert_eq!(out, [9, 9, 4]);
    }
}
