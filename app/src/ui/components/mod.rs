//! Reusable view pieces: charts, tables, error boxes.

mod chart;
mod error_box;
mod levels_table;

pub use chart::ChartView;
pub use error_box::ErrorBox;
pub use levels_table::LevelsTable;
