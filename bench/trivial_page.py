"""The peer of bench/bench_browser.py: the smallest Streamlit page with one slider and one Plotly chart.

Run by the bench on its own free port, with the same .streamlit/config.toml as the app."""
import numpy as np
import plotly.graph_objects as go
import streamlit as st

f = st.slider("frequency", 1, 40, 10, key="trivial_f")
x = np.linspace(0, 1, 50)
st.plotly_chart(go.Figure(go.Scatter(x=x, y=np.sin(2 * np.pi * f * x))), key="trivial_chart")
