//! [`CellAtlas`]: where rigs are drawn. Rigs render offscreen into cells of shared square
//! pages; each page holds one cell size on a uniform grid, so a cell is found from its index
//! alone (`column = index % columns`, `row = index / columns`) and a display shader needs only the
//! page's grid to find a rig's pixels.

use super::atlas::PixelRect;

/// A cell: its page and its index on the page's grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    /// Index in [`CellAtlas::pages`].
    pub page: usize,
    /// Index on the page's grid, row-major.
    pub index: u32,
}

/// One page: a square texture holding cells of one size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellPage {
    /// The page's side in pixels.
    pub side: u32,
    /// The size of every cell on the page.
    pub cell_width: u32,
    /// The size of every cell on the page.
    pub cell_height: u32,
    /// Cells per row.
    pub columns: u32,
    /// Rows of cells.
    pub rows: u32,
    free: Vec<u32>,
    next: u32,
    used: u32,
}

impl CellPage {
    fn new(side: u32, cell_width: u32, cell_height: u32) -> Self {
        Self {
            side,
            cell_width,
            cell_height,
            columns: (side / cell_width).max(1),
            rows: (side / cell_height).max(1),
            free: Vec::new(),
            next: 0,
            used: 0,
        }
    }

    /// How many cells the page holds.
    pub fn capacity(&self) -> u32 {
        self.columns.saturating_mul(self.rows)
    }

    /// How many of its cells are in use.
    #[cfg(test)]
    pub fn used(&self) -> u32 {
        self.used
    }

    /// The pixels of cell `index`.
    pub fn rect(&self, index: u32) -> PixelRect {
        PixelRect {
            x: (index % self.columns) * self.cell_width,
            y: (index / self.columns) * self.cell_height,
            width: self.cell_width,
            height: self.cell_height,
        }
    }

    fn take(&mut self) -> Option<u32> {
        let index = match self.free.pop() {
            Some(i) => i,
            None if self.next < self.capacity() => {
                self.next += 1;
                self.next - 1
            }
            None => return None,
        };
        self.used += 1;
        Some(index)
    }
}

/// Pages of cells, allocated and freed as rigs come and go.
///
/// A cell of `w × h` goes to the first page with that cell size and a free cell; otherwise to an
/// empty page (which takes the new size), otherwise to a new page of side
/// `max(page_side, w, h)`. Freed cells are reused; pages are never dropped (their textures stay
/// allocated for the next rigs), which bounds the churn when rigs come and go every frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellAtlas {
    page_side: u32,
    max_side: u32,
    pages: Vec<CellPage>,
}

impl CellAtlas {
    /// An atlas of pages `page_side` pixels square (at least 1), none of them larger than
    /// `max_side` (the device's texture limit).
    pub fn new(page_side: u32, max_side: u32) -> Self {
        let max_side = max_side.max(1);
        Self {
            page_side: page_side.clamp(1, max_side),
            max_side,
            pages: Vec::new(),
        }
    }

    /// The pages so far.
    pub fn pages(&self) -> &[CellPage] {
        &self.pages
    }

    /// A cell of `width × height` pixels (each side cut to the largest page side the atlas
    /// allows, at least 1), with the size it really has.
    pub fn allocate(&mut self, width: u32, height: u32) -> (Cell, PixelRect) {
        let (w, h) = (
            width.clamp(1, self.max_side),
            height.clamp(1, self.max_side),
        );
        let fits = |p: &CellPage| p.cell_width == w && p.cell_height == h;
        let page = match self
            .pages
            .iter()
            .position(|p| fits(p) && p.used < p.capacity())
        {
            Some(i) => i,
            None => {
                let side = self.page_side.max(w).max(h);
                match self
                    .pages
                    .iter()
                    .position(|p| p.used == 0 && p.side >= side)
                {
                    Some(i) => {
                        self.pages[i] = CellPage::new(self.pages[i].side, w, h);
                        i
                    }
                    None => {
                        self.pages.push(CellPage::new(side, w, h));
                        self.pages.len() - 1
                    }
                }
            }
        };
        let p = &mut self.pages[page];
        let index = p.take().expect("a page chosen with a free cell");
        (Cell { page, index }, p.rect(index))
    }

    /// Gives a cell back; a cell that is not in use is ignored.
    pub fn free(&mut self, cell: Cell) {
        let Some(p) = self.pages.get_mut(cell.page) else {
            return;
        };
        if cell.index < p.next && !p.free.contains(&cell.index) && p.used > 0 {
            p.free.push(cell.index);
            p.used -= 1;
            if p.used == 0 {
                p.free.clear();
                p.next = 0;
            }
        }
    }

    /// The pixels of a cell on its page.
    pub fn rect(&self, cell: Cell) -> Option<PixelRect> {
        self.pages.get(cell.page).map(|p| p.rect(cell.index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overlaps(a: PixelRect, b: PixelRect) -> bool {
        a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
    }

    #[test]
    fn cells_tile_a_page_without_overlap_then_open_a_new_page() {
        // 1024 / 300 = 3 columns, 1024 / 200 = 5 rows: 15 cells on the first page.
        let mut atlas = CellAtlas::new(1024, 8192);
        let cells: Vec<_> = (0..16).map(|_| atlas.allocate(300, 200)).collect();
        assert_eq!(atlas.pages().len(), 2);
        assert_eq!(atlas.pages()[0].capacity(), 15);
        assert_eq!(cells[15].0, Cell { page: 1, index: 0 });
        // Cell 4: column 1, row 1 → (300, 200).
        assert_eq!(
            cells[4].1,
            PixelRect {
                x: 300,
                y: 200,
                width: 300,
                height: 200
            }
        );
        for (i, (a, ra)) in cells.iter().enumerate() {
            assert!(ra.x + ra.width <= 1024 && ra.y + ra.height <= 1024);
            for (b, rb) in &cells[..i] {
                assert!(a.page != b.page || !overlaps(*ra, *rb), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn sizes_get_their_own_pages_and_freed_cells_are_reused() {
        let mut atlas = CellAtlas::new(512, 8192);
        let (a, _) = atlas.allocate(100, 100);
        let (b, _) = atlas.allocate(64, 32);
        assert_ne!(a.page, b.page);
        let (c, _) = atlas.allocate(100, 100);
        assert_eq!((c.page, c.index), (a.page, 1));
        atlas.free(a);
        atlas.free(a); // twice: ignored
        assert_eq!(atlas.pages()[a.page].used(), 1);
        assert_eq!(atlas.allocate(100, 100).0, a);
        // An emptied page takes the next new size instead of a new page being made.
        atlas.free(b);
        let (d, rect) = atlas.allocate(50, 70);
        assert_eq!(d.page, b.page);
        assert_eq!((rect.width, rect.height), (50, 70));
        assert_eq!(atlas.pages().len(), 2);
    }

    #[test]
    fn a_cell_larger_than_a_page_gets_a_page_of_its_size_up_to_the_limit() {
        let mut atlas = CellAtlas::new(256, 4096);
        let (cell, rect) = atlas.allocate(1000, 300);
        assert_eq!(atlas.pages()[cell.page].side, 1000);
        assert_eq!((rect.width, rect.height), (1000, 300));
        let (_, rect) = atlas.allocate(9000, 0);
        assert_eq!((rect.width, rect.height), (4096, 1));
        assert_eq!(atlas.rect(Cell { page: 9, index: 0 }), None);
    }
}
